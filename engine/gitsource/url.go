package gitsource

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/lazyregexp"
)

const urlHint = "use https://host/org/repo.git, ssh://git@host/org/repo.git, git@host:org/repo.git, git+https://… or file:///abs/path/to/repo"

// scpLike matches scp-style ssh addresses such as git@github.com:org/repo.git.
var scpLike = lazyregexp.New(`^[A-Za-z0-9._~-]+@[A-Za-z0-9.-]+:[^/\\]`)

// ValidateURL reports whether u is a git remote agentpack accepts: https,
// ssh (ssh:// or git@host:path), git+https / git+ssh, file:// or an absolute
// local path. Anything else is E_SOURCE_URL_INVALID.
func ValidateURL(u string) error {
	_, err := NormalizeURL(u)
	return err
}

// NormalizeURL validates u like [ValidateURL] and returns it in the form used
// for fetching and for the cache key: git+https:// and git+ssh:// lose their
// "git+" prefix; every other accepted URL is returned unchanged.
func NormalizeURL(u string) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", apperr.New(apperr.SourceURLInvalid, format, args...).WithHint(urlHint).With("url", u)
	}
	if strings.TrimSpace(u) == "" {
		return bad("empty git URL")
	}
	if strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return bad("git URL %q contains whitespace or control characters", u)
	}
	if scpLike.MatchString(u) {
		return u, nil
	}
	if filepath.IsAbs(u) && !strings.Contains(u, "://") {
		return u, nil
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" {
		return bad("%q is not a git URL", u)
	}
	scheme := strings.ToLower(p.Scheme)
	switch scheme {
	case "git+https", "git+ssh":
		// net/url checks some parts (an http(s) port) only for schemes it
		// knows, so the URL that is really fetched is validated on its own.
		n, err := NormalizeURL(strings.TrimPrefix(scheme, "git+") + u[len(p.Scheme):])
		if err != nil {
			return bad("%s (from %q)", apperr.As(err).Message, u)
		}
		return n, nil
	case "https", "ssh", "file":
	case "http":
		return bad("plain http is not allowed for %q", u)
	default:
		return bad("unsupported URL scheme %q in %q", p.Scheme, u)
	}
	switch scheme {
	case "file":
		if p.Host != "" && p.Host != "localhost" {
			return bad("file URL %q must not name a host", u)
		}
		if p.Path == "" || p.Path == "/" {
			return bad("file URL %q has no path", u)
		}
	default:
		if p.Host == "" {
			return bad("git URL %q has no host", u)
		}
		if !strings.HasPrefix(p.Host, "[") && strings.Count(p.Host, ":") > 1 {
			// net/url checks the port of http(s) only: for ssh it reads
			// "host:1:2" as host "host:1", port 2.
			return bad("git URL %q has an invalid host:port %q", u, p.Host)
		}
		if _, has := p.User.Password(); has {
			return bad("git URL %q embeds a password; it would be written to the lockfile", redact(p))
		}
		if strings.Trim(p.Path, "/") == "" {
			return bad("git URL %q has no repository path", u)
		}
	}
	return u, nil
}

func redact(p *url.URL) string {
	c := *p
	c.User = url.User(p.User.Username())
	return c.String()
}

// CleanSubdir returns sub as a clean repo-relative '/' path ("" for the repo
// root). Absolute paths, drive letters and any ".." segment are
// E_SOURCE_URL_INVALID. Backslashes count as separators.
func CleanSubdir(sub string) (string, error) {
	bad := func(why string) (string, error) {
		return "", apperr.New(apperr.SourceURLInvalid, "invalid subdir %q: %s", sub, why).
			WithHint("give a path relative to the repository root, such as skills/review").
			With("subdir", sub)
	}
	s := strings.ReplaceAll(strings.TrimSpace(sub), `\`, "/")
	if strings.ContainsRune(s, 0) {
		return bad("contains a NUL byte")
	}
	if strings.HasPrefix(s, "/") || (len(s) >= 2 && s[1] == ':') {
		return bad("must be relative")
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == ".." {
			return bad(`must not contain ".."`)
		}
	}
	c := path.Clean(s)
	if c == "." {
		return "", nil
	}
	return c, nil
}
