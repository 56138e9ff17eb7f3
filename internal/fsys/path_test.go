package fsys

import (
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestNewAbsPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("cases use Unix paths")
	}
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"/a/b", "/a/b", true},
		{"/a//b/./c/", "/a/b/c", true},
		{"/a/b/../c", "/a/c", true},
		{"/", "/", true},
		{"", "", false},
		{"a/b", "", false},
		{"./a", "", false},
		{"/a\x00b", "", false},
	} {
		got, err := NewAbsPath(tt.in)
		if tt.ok != (err == nil) || string(got) != tt.want {
			t.Errorf("NewAbsPath(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Errorf("NewAbsPath(%q) code = %s", tt.in, apperr.CodeOf(err))
		}
	}
}

func TestNewRelPath(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"a", "a", true},
		{"a/b.md", "a/b.md", true},
		{"a//b/./c/", "a/b/c", true},
		{"..a/b..", "..a/b..", true},
		{"", "", false},
		{".", "", false},
		{"./", "", false},
		{"..", "", false},
		{"../a", "", false},
		{"a/../b", "", false},
		{"a/..", "", false},
		{"/a", "", false},
		{`a\b`, "", false},
		{`..\a`, "", false},
		{"a\x00b", "", false},
	} {
		got, err := NewRelPath(tt.in)
		if tt.ok != (err == nil) || string(got) != tt.want {
			t.Errorf("NewRelPath(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Errorf("NewRelPath(%q) code = %s", tt.in, apperr.CodeOf(err))
		}
	}
}

func TestAbsPathContainsAndRel(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("cases use Unix paths")
	}
	for _, tt := range []struct {
		base, target string
		contains     bool
		rel          string // "" when Rel must fail
	}{
		{"/a/b", "/a/b/c", true, "c"},
		{"/a/b", "/a/b/c/d.md", true, "c/d.md"},
		{"/a/b", "/a/b", true, ""},
		{"/a/b", "/a/bc", false, ""},
		{"/a/b", "/a/bc/d", false, ""},
		{"/a/b", "/a", false, ""},
		{"/a/b", "/x/a/b", false, ""},
		{"/", "/a", true, "a"},
		{"/", "/", true, ""},
		{"/a", `/a/b\c`, true, ""}, // a legal Unix name no RelPath can hold
	} {
		base, target := AbsPath(tt.base), AbsPath(tt.target)
		if got := base.Contains(target); got != tt.contains {
			t.Errorf("%s.Contains(%s) = %v", base, target, got)
		}
		rel, err := base.Rel(target)
		if string(rel) != tt.rel || (err == nil) != (tt.rel != "") {
			t.Errorf("%s.Rel(%s) = %q, %v; want %q", base, target, rel, err, tt.rel)
		}
	}
}

func TestAbsPathMethods(t *testing.T) {
	root := AbsPath(filepath.FromSlash("/home/me"))
	if runtime.GOOS == "windows" {
		root = `C:\home\me`
	}
	p := root.Join("a/b.md")
	if p.ToSlash() != root.ToSlash()+"/a/b.md" || p.Base() != "b.md" || p.Dir() != root.JoinName("a") {
		t.Errorf("Join/Base/Dir: got %s, %s, %s", p, p.Base(), p.Dir())
	}
	if rel, _ := root.Rel(p); rel != "a/b.md" || !slices.Equal(rel.Parts(), []string{"a", "b.md"}) {
		t.Errorf("Rel = %q, parts %q", rel, rel.Parts())
	}
	if got := RelPath("a").Join("b/c"); got != "a/b/c" {
		t.Errorf("RelPath.Join = %q", got)
	}
	for _, name := range []string{"", ".", "..", "a/b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("JoinName(%q) did not panic", name)
				}
			}()
			root.JoinName(name)
		}()
	}
}

func TestCleanAbs(t *testing.T) {
	for p, want := range map[string]bool{"/": true, "/a": true, "/a/b.c/..d": true, "": false, "a": false, "/a/": false,
		"//a": false, "/a//b": false, "/a/./b": false, "/a/.": false, "/a/..": false, "/../a": false, "/.a/b..": true} {
		if got := CleanAbs(p); got != want || (got && filepath.Clean(p) != p) {
			t.Errorf("CleanAbs(%q) = %v, want %v", p, got, want)
		}
	}
}

// Dir of a clean path, cut at its last '/', is what filepath.Dir gives,
// as it is for any other path.
func TestDirIsFilepathDir(t *testing.T) {
	for _, p := range []string{"/", "/a", "/a/b", "/a/b.c/..d", "/.a/b..", "/a/", "//a", "/a//b", "/a/./b", "/a/..", "/../a", "a/b", ""} {
		if got, want := AbsPath(p).Dir(), AbsPath(filepath.Dir(p)); got != want {
			t.Errorf("Dir(%q) = %q, want %q", p, got, want)
		}
	}
}
