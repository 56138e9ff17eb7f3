package settings

import (
	"os"
	"path/filepath"
	"strings"
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

// Set changes only its key's line (comments and other tables stay), values
// are typed, Get says where a value comes from, and an unknown key lists
// the valid ones.
func TestGetSetKeepsComments(t *testing.T) {
	home := t.TempDir()
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	orig := "# my settings\n[author]\nname = \"Ann\" # me\n\n[[registries]]\nname = \"team\"\nurl = \"/srv/reg\"\n"
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTPACK_MCP_ALLOW_WRITE": "true"}
	s, err := Load(sys, fsys.AbsPath(home), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get("author.name"); v.Value != "Ann" || v.Source != "global" {
		t.Fatalf("author.name = %+v", v)
	}
	if v, _ := s.Get("mcp.allow_write"); v.Value != true || v.Source != "env" {
		t.Fatalf("mcp.allow_write = %+v", v)
	}
	if v, _ := s.Get("security.require_checksum"); v.Value != true || v.Source != "default" {
		t.Fatalf("security.require_checksum = %+v", v)
	}
	if _, err := s.Set("author.email", "ann@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set("install.default_tags", "base, work"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set("security.require_checksum", "maybe"); apperr.CodeOf(err) != apperr.InvalidArgument {
		t.Fatalf("a bad bool: %v", err)
	}
	if _, err := s.Get("nope"); apperr.CodeOf(err) != apperr.InvalidArgument || !strings.Contains(apperr.As(err).Hint, "author.name") {
		t.Fatalf("unknown key: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(home, FileName))
	text := string(data)
	for _, want := range []string{"# my settings\n", "name = \"Ann\" # me\n", "email = 'ann@example.com'", "[install]\ndefault_tags = ['base', 'work']\n", "[[registries]]\nname = \"team\"\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("config.toml lacks %q:\n%s", want, text)
		}
	}
	s2, err := Load(sys, fsys.AbsPath(home), nil)
	if err != nil {
		t.Fatalf("the edited file does not load: %v\n%s", err, text)
	}
	if v, _ := s2.Get("install.default_tags"); len(v.Value.([]string)) != 2 {
		t.Fatalf("install.default_tags = %+v", v)
	}
	if len(s2.Registries()) != 1 {
		t.Fatal("the registry table was lost")
	}
}
