package fsys

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
)

// AbsPath is a cleaned absolute path in the OS's own syntax.
type AbsPath string

// RelPath is a clean, '/'-separated relative path that cannot leave the
// folder it is joined to: it has no ".." element, no leading '/', no
// backslash, and is neither "." nor empty.
type RelPath string

// NewAbsPath cleans s and refuses it with E_IO_INVALID_PATH when it is empty,
// relative or holds a NUL byte, so a path resolved against the working directory by accident
// never reaches a System.
func NewAbsPath(s string) (AbsPath, error) {
	if s == "" || strings.ContainsRune(s, 0) || !filepath.IsAbs(s) {
		return "", apperr.New(apperr.IOInvalidPath, "%q is not an absolute path", s).
			WithHint("pass a full path such as /home/me/project").With("path", s)
	}
	return AbsPath(filepath.Clean(s)), nil
}

// NewRelPath cleans s ("a//b/" becomes "a/b") and refuses it with
// E_IO_INVALID_PATH when it could name something outside its base folder.
func NewRelPath(s string) (RelPath, error) {
	bad := s == "" || strings.HasPrefix(s, "/") || strings.ContainsAny(s, "\\\x00")
	for _, part := range strings.Split(s, "/") {
		bad = bad || part == ".."
	}
	// IsLocal also catches volume names and reserved names such as NUL on
	// Windows, which a '/'-only check would let through.
	clean := path.Clean(s)
	if bad || clean == "." || !filepath.IsLocal(filepath.FromSlash(clean)) {
		return "", apperr.New(apperr.IOInvalidPath, "%q is not a relative path inside its folder", s).
			WithHint("use a '/'-separated path without '..', such as agents/reviewer.md").With("path", s)
	}
	return RelPath(clean), nil
}

// String returns p as an OS path.
func (p AbsPath) String() string { return string(p) }

// ToSlash returns p with '/' separators, for JSON and golden files.
func (p AbsPath) ToSlash() string { return filepath.ToSlash(string(p)) }

// Join returns the path rel names below p.
func (p AbsPath) Join(rel RelPath) AbsPath {
	return AbsPath(filepath.Join(string(p), filepath.FromSlash(string(rel))))
}

// JoinName returns p's child called name. The name must be one element, as
// ReadDir returns them; anything else is a programming error and panics
// rather than letting "../x" climb out of p.
func (p AbsPath) JoinName(name string) AbsPath {
	// A backslash is an ordinary name character on Unix, a separator on Windows.
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") ||
		strings.ContainsRune(name, filepath.Separator) {
		panic(fmt.Sprintf("fsys: JoinName(%q) needs a single path element", name))
	}
	return AbsPath(filepath.Join(string(p), name))
}

// Dir returns p's parent folder; the parent of a root is the root. A
// clean '/' path (as every path agentpack builds is) is cut at its last
// '/', without the Clean filepath.Dir makes of it: a plan into new folders
// asks for the parents of 10,000 paths, a deploy for the folder of each
// file it writes.
func (p AbsPath) Dir() AbsPath {
	if filepath.Separator == '/' && CleanAbs(string(p)) {
		if i := strings.LastIndexByte(string(p), '/'); i > 0 {
			return p[:i]
		}
		return "/"
	}
	return AbsPath(filepath.Dir(string(p)))
}

// CleanAbs reports whether p is an absolute '/' path that filepath.Clean
// leaves as it is.
func CleanAbs(p string) bool {
	return p == "/" || (len(p) > 1 && p[0] == '/' && CleanElems(p[1:]))
}

// CleanElems reports whether p is one or more '/'-separated elements, none
// of them empty, "." or "..": a relative path Clean leaves as it is.
func CleanElems(p string) bool {
	for {
		i := strings.IndexByte(p, '/')
		elem := p
		if i >= 0 {
			elem = p[:i]
		}
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
		if i < 0 {
			return true
		}
		p = p[i+1:]
	}
}

// Base returns p's last element.
func (p AbsPath) Base() string { return filepath.Base(string(p)) }

// Contains reports whether other is p or lies below it. The comparison is
// per element, so /a/bc is not inside /a/b.
func (p AbsPath) Contains(other AbsPath) bool {
	if other == p {
		return true
	}
	// Only a root such as "/" or `C:\` already ends in a separator.
	if strings.HasSuffix(string(p), string(filepath.Separator)) {
		return strings.HasPrefix(string(other), string(p))
	}
	return len(other) > len(p) && other[len(p)] == filepath.Separator && strings.HasPrefix(string(other), string(p))
}

// Rel returns target relative to p, or E_IO_INVALID_PATH when target is p
// itself, lies outside it, or has a name a [RelPath] cannot hold (a
// backslash, legal in Unix names).
func (p AbsPath) Rel(target AbsPath) (RelPath, error) {
	if target == p || !p.Contains(target) {
		return "", apperr.New(apperr.IOInvalidPath, "%s is not inside %s", target, p).
			With("path", target.String()).With("root", p.String())
	}
	rel, err := filepath.Rel(string(p), string(target))
	if err != nil {
		return "", apperr.Wrap(err, apperr.IOInvalidPath, "%s is not inside %s", target, p)
	}
	return NewRelPath(filepath.ToSlash(rel))
}

// String returns p with '/' separators.
func (p RelPath) String() string { return string(p) }

// Join returns p followed by rel; both are clean, so the result is too.
func (p RelPath) Join(rel RelPath) RelPath { return RelPath(path.Join(string(p), string(rel))) }

// Parts returns p's elements in order.
func (p RelPath) Parts() []string { return strings.Split(string(p), "/") }
