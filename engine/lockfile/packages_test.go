package lockfile

import (
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func TestPackagesSectionRoundTrip(t *testing.T) {
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	dir, _ := fsys.NewAbsPath(t.TempDir())
	path := dir.JoinName(FileName)
	l := New()
	before, _ := l.Marshal()
	if strings.Contains(string(before), "packages") {
		t.Fatalf("an empty packages section is written:\n%s", before)
	}
	sum := "sha256:" + strings.Repeat("ab", 32)
	l.SetPackages([]Package{
		{Name: "zeta", Version: "1.0.0", Registry: "local", URL: "file:///r", Checksum: sum, RequiredBy: []string{"b", "a"},
			Files: []PackageFile{{Path: "z", SHA256: strings.Repeat("0", 64)}, {Path: "a", SHA256: strings.Repeat("1", 64)}}},
		{Name: "@s/alpha", Version: "2.0.0", Checksum: sum, Dependencies: map[string]string{"zeta": "1.0.0"}},
	})
	if err := l.SaveOn(sys, path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadOn(sys, path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Packages[0].Name != "@s/alpha" || got.FindPackage("zeta").Files[0].Path != "a" || got.FindPackage("zeta").RequiredBy[0] != "a" ||
		got.FindPackage("@s/alpha").Dependencies["zeta"] != "1.0.0" || got.FindPackage("zeta").Dependencies == nil {
		t.Fatalf("round trip: %+v", got.Packages)
	}
	for _, bad := range []string{
		`{"version":1,"generated_at":"x","modules":[],"packages":[{"name":"a","version":"1.0.0","checksum":"md5:x"}]}`,
		`{"version":1,"generated_at":"x","modules":[],"packages":[{"name":"a","version":"1.0.0","checksum":"` + sum + `"},{"name":"a","version":"1.0.0","checksum":"` + sum + `"}]}`,
		`{"version":1,"generated_at":"x","modules":[],"packages":[{"name":"a","version":"1.0.0","checksum":"` + sum + `","files":[{"path":"","sha256":"x"}]}]}`,
	} {
		if err := sys.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadOn(sys, path); apperr.CodeOf(err) != apperr.LockfileInvalid {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
