package gitsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// FetchOptions tune network access to a git remote.
type FetchOptions struct {
	// Timeout bounds each attempt (listing refs or fetching); 0 means 2m.
	Timeout time.Duration
	// Retries is how many times a transient network failure is retried, with
	// exponential backoff from 200ms; 0 means 3, negative means none.
	// Missing repositories, refused credentials and unknown refs are never
	// retried.
	Retries int
	// Progress, when not nil, receives go-git's progress output and retry
	// notices.
	Progress io.Writer
	// OnRepair, when not nil, is called after a cached checkout was evicted
	// to make room for a fresh download of the same commit, with the
	// checkout's folder and the verification error that condemned it (nil
	// when [Cache.Repair] replaced a checkout that verified). The engine
	// can turn it into a warning.
	OnRepair func(path string, cause error)
}

// DefaultTimeout and DefaultRetries are used for zero [FetchOptions] fields.
const (
	DefaultTimeout = 2 * time.Minute
	DefaultRetries = 3
)

// initialBackoff is the first retry delay; tests shorten it.
var initialBackoff = 200 * time.Millisecond

func (o FetchOptions) withDefaults() FetchOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	return o
}

// retry runs op, each attempt under its own timeout, retrying transient
// failures with exponential backoff. It stops at once when ctx ends.
func retry(ctx context.Context, opt FetchOptions, what string, op func(context.Context) error) error {
	backoff := initialBackoff
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, opt.Timeout)
		err := op(actx)
		if err != nil && actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			err = fmt.Errorf("%s timed out after %s: %w", what, opt.Timeout, err)
		}
		cancel()
		if err == nil || ctx.Err() != nil || !transient(err) || attempt >= opt.Retries {
			return err
		}
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "%s failed (%v); retrying in %s\n", what, err, backoff)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return err
		}
		backoff *= 2
	}
}

// transient reports whether err is worth retrying: connection, DNS and
// timeout failures, and HTTP 429/5xx answers.
func transient(err error) bool {
	return isNetwork(err) || anyCause(err, func(e error) bool {
		var he *githttp.Err
		if errors.As(e, &he) && he.Response != nil {
			s := he.Response.StatusCode
			return s == http.StatusTooManyRequests || s >= 500
		}
		return false
	})
}

// isNetwork reports whether err comes from the network below git: DNS,
// refused or reset connections, timeouts, truncated streams.
func isNetwork(err error) bool {
	return anyCause(err, func(e error) bool {
		var dns *net.DNSError
		var op *net.OpError
		var ne net.Error
		switch {
		case errors.As(e, &dns), errors.As(e, &op):
			return true
		case errors.As(e, &ne) && ne.Timeout():
			return true
		}
		return errors.Is(e, context.DeadlineExceeded) || errors.Is(e, io.ErrUnexpectedEOF) ||
			errors.Is(e, syscall.ECONNREFUSED) || errors.Is(e, syscall.ECONNRESET) ||
			errors.Is(e, syscall.ETIMEDOUT) || errors.Is(e, syscall.EHOSTUNREACH) ||
			errors.Is(e, syscall.ENETUNREACH)
	})
}

// anyCause applies f to err and its causes, looking inside go-git's
// UnexpectedError and PermanentError, which do not implement Unwrap.
func anyCause(err error, f func(error) bool) bool {
	for depth := 0; err != nil && depth < 16; depth++ {
		if f(err) {
			return true
		}
		var ue *plumbing.UnexpectedError
		var pe *plumbing.PermanentError
		switch {
		case errors.As(err, &ue):
			err = ue.Err
		case errors.As(err, &pe):
			err = pe.Err
		default:
			return false
		}
	}
	return false
}

// remoteError turns a go-git failure into an apperr: E_NETWORK for network
// failures, else code, with a hint for the common causes.
func remoteError(err error, code apperr.Code, url string, retries int, format string, args ...any) *apperr.Error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae
	}
	var e *apperr.Error
	switch {
	case errors.Is(err, context.Canceled):
		e = apperr.Wrap(err, code, format+" (canceled)", args...)
	case isNetwork(err):
		e = apperr.Wrap(err, apperr.Network, format, args...).
			WithHint("check the network connection, proxy settings (HTTPS_PROXY) and that the host is reachable; gave up after %d retries", retries)
	case anyCause(err, func(e error) bool { return errors.Is(e, transport.ErrRepositoryNotFound) }):
		e = apperr.Wrap(err, code, format, args...).
			WithHint("check the URL: the repository does not exist or is not visible without credentials")
	case anyCause(err, func(e error) bool {
		return errors.Is(e, transport.ErrAuthenticationRequired) || errors.Is(e, transport.ErrAuthorizationFailed) ||
			errors.Is(e, transport.ErrInvalidAuthMethod)
	}):
		e = apperr.Wrap(err, code, format, args...).
			WithHint("the remote refused access; for ssh URLs load your key into ssh-agent, for private https repos use an ssh URL")
	default:
		e = apperr.Wrap(err, code, format, args...)
	}
	return e.With("url", url)
}
