package sourcecache

import (
	"errors"

	"github.com/agentpack/agentpack/internal/bincodec"
)

// errDamaged is every decoding failure: the caller only needs to know the
// file cannot be used.
var errDamaged = bincodec.ErrDamaged

// errNoBytes refuses to encode a file that has neither bytes nor a source
// the entry's fingerprint covers: it could not be read back.
var errNoBytes = errors.New("sourcecache: a file has neither bytes nor a fingerprinted source")

// writer is a [bincodec.Writer] that also writes symbols.
type writer struct {
	*bincodec.Writer
	syms map[string]uint64
}

// sym writes s as a symbol: a repeated string is written once, then by
// its number (a file's target, root and module ids repeat across files).
func (w *writer) sym(s string) {
	if i, ok := w.syms[s]; ok {
		w.Uint(i + 1)
		return
	}
	if w.syms == nil {
		w.syms = map[string]uint64{}
	}
	w.syms[s] = uint64(len(w.syms))
	w.Uint(0)
	w.String(s)
}

// reader is a [bincodec.Reader] that also reads symbols; the first
// problem sticks in Err and every later read returns zero values, so
// callers check Err once.
type reader struct {
	*bincodec.Reader
	syms []string
}

// sym reads a symbol written by writer.sym; a repeated one shares the
// first one's string.
func (r *reader) sym() string {
	i := r.Uint()
	if i == 0 {
		s := r.String()
		r.syms = append(r.syms, s)
		return s
	}
	if i > uint64(len(r.syms)) {
		r.Fail()
		return ""
	}
	return r.syms[i-1]
}
