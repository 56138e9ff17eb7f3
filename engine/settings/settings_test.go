package settings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func TestLoadRegistries(t *testing.T) {
	home := t.TempDir()
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	s, err := Load(sys, fsys.AbsPath(home), nil)
	if err != nil || len(s.Registries()) != 0 {
		t.Fatalf("a missing config.toml: %v %v", s, err)
	}
	toml := "# mine\n[[registries]]\nname = \"team\"\nurl = \"/srv/reg\"\n\n[[registries]]\nname = \"ghcr\"\nurl = \"oci://ghcr.io/acme\"\ndefault = true\n"
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Load(sys, fsys.AbsPath(home), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Registries()
	if len(r) != 2 || r[0].Name != "team" || r[0].Type != "local" || r[1].Type != "oci" || !r[1].Default {
		t.Fatalf("registries = %+v", r)
	}
	if err := os.WriteFile(filepath.Join(home, FileName), []byte("[[registries]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(sys, fsys.AbsPath(home), nil); apperr.CodeOf(err) != apperr.ConfigInvalid {
		t.Fatalf("broken TOML: %v", err)
	}
}
