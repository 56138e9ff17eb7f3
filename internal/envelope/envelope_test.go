package envelope

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// Every path field in error details gets its '/'-separated twin (SPEC §7).
func TestFailAddsPosixTwins(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "a", "b.md")
	err := apperr.New(apperr.DriftConflict, "x").
		With("path", abs).With("paths", []string{abs, abs}).With("root", abs).With("root_posix", "given").
		With("flag", "--force").With("sample", []string{"relative/x"}).With("problems", []string{"/target: bad"}).With("paths_rel", []string{"x"})
	d := New("deploy", "deploy --apply").Fail(err, nil).Errors[0].Details
	if d["path_posix"] != filepath.ToSlash(abs) || !reflect.DeepEqual(d["paths_posix"], []string{filepath.ToSlash(abs), filepath.ToSlash(abs)}) {
		t.Fatalf("no posix twins: %v", d)
	}
	if d["root_posix"] != "given" {
		t.Fatalf("a twin the error set was replaced: %v", d["root_posix"])
	}
	if _, ok := d["flag_posix"]; ok {
		t.Fatalf("a non-path got a twin: %v", d)
	}
	for _, k := range []string{"sample_posix", "problems_posix", "paths_rel_posix"} {
		if _, ok := d[k]; ok {
			t.Fatalf("%s: not a path field, but got a twin: %v", k, d)
		}
	}
}
