package manifest_test

import (
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

type memFile []byte

func (m memFile) ReadFile(fsys.AbsPath) ([]byte, error) { return m, nil }

func editPackages(t *testing.T, data string, edit func(*manifest.Doc, *manifest.Manifest) ([]byte, error)) string {
	t.Helper()
	m, err := manifest.Parse([]byte(data), known)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := manifest.OpenDoc(memFile(data), "/repo/agentpack.yaml", known)
	if err != nil {
		t.Fatal(err)
	}
	out, err := edit(doc, m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

const pkgBase = "version: 1\nprofiles:\n  default: {include_tags: [base]}\ntargets: {codex: {}}\nmodules: []\n"

func TestPackagesListEdits(t *testing.T) {
	add := func(p manifest.PackageEntry) func(*manifest.Doc, *manifest.Manifest) ([]byte, error) {
		return func(d *manifest.Doc, m *manifest.Manifest) ([]byte, error) { return d.UpsertPackage(m, p) }
	}
	// A first package adds the list at the end, keeping everything above.
	got := editPackages(t, pkgBase+"# tail comment\n", add(manifest.PackageEntry{Name: "@acme/kit", Version: "^1.0.0", Tags: []string{"base"}}))
	want := pkgBase + "# tail comment\npackages:\n  - name: '@acme/kit'\n    version: ^1.0.0\n    tags: [base]\n"
	if got != want {
		t.Fatalf("first package:\n%s\nwant:\n%s", got, want)
	}
	// A second one is appended after it; a comment inside the list survives.
	withComment := strings.Replace(got, "packages:\n", "packages:\n  # team kit\n", 1)
	got = editPackages(t, withComment, add(manifest.PackageEntry{Name: "lint", Version: "~2.1.0"}))
	if !strings.Contains(got, "  # team kit\n  - name: '@acme/kit'") || !strings.HasSuffix(got, "  - name: lint\n    version: ~2.1.0\n") {
		t.Fatalf("second package:\n%s", got)
	}
	// Upserting an existing name replaces its entry in place.
	got = editPackages(t, got, add(manifest.PackageEntry{Name: "@acme/kit", Version: "^1.2.0", Tags: []string{"work"}}))
	if strings.Count(got, "@acme/kit") != 1 || !strings.Contains(got, "# team kit\n  - name: '@acme/kit'\n    version: ^1.2.0\n    tags: [work]\n  - name: lint") {
		t.Fatalf("replace:\n%s", got)
	}
	// Removing keeps the other entry and the rest of the file.
	got = editPackages(t, got, func(d *manifest.Doc, m *manifest.Manifest) ([]byte, error) { return d.RemovePackage(m, "lint") })
	if strings.Contains(got, "lint") || !strings.Contains(got, "# tail comment") {
		t.Fatalf("remove:\n%s", got)
	}
	got = editPackages(t, got, func(d *manifest.Doc, m *manifest.Manifest) ([]byte, error) { return d.RemovePackage(m, "@acme/kit") })
	if m, err := manifest.Parse([]byte(got), known); err != nil || len(m.Packages) != 0 {
		t.Fatalf("remove last: %v\n%s", err, got)
	}
	// A flow-style list is re-rendered rather than edited as text.
	got = editPackages(t, pkgBase+"packages: [{name: a}]\n", add(manifest.PackageEntry{Name: "b", Version: "1.0.0"}))
	if m, err := manifest.Parse([]byte(got), known); err != nil || len(m.Packages) != 2 || m.Packages[1].Version != "1.0.0" {
		t.Fatalf("flow list: %v\n%s", err, got)
	}
}

func TestPackagesListValidation(t *testing.T) {
	for _, bad := range []string{
		"packages:\n  - name: Bad\n",
		"packages:\n  - {name: a}\n  - {name: a}\n",
		"packages:\n  - {name: a, extra: 1}\n",
		"packages:\n  - {name: a, tags: base}\n",
	} {
		if _, err := manifest.Parse([]byte(pkgBase+bad), known); apperr.CodeOf(err) != apperr.ConfigInvalid {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := manifest.Parse([]byte(pkgBase+"packages:\n  - {name: a, targets: [nope]}\n"), known); apperr.CodeOf(err) != apperr.TargetUnsupported {
		t.Errorf("unknown target: %v", err)
	}
	m, err := manifest.Parse([]byte(pkgBase+"packages:\n  - {name: '@s/a', version: ^1, artifacts: [x]}\n"), known)
	if err != nil || m.FindPackage("@s/a") == nil || m.Packages[0].Line != 7 || len(m.Warnings) != 0 {
		t.Fatalf("%v %+v", err, m)
	}
}
