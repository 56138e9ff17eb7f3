// Package settings reads $AGENTPACK_HOME/config.toml: for now the
// [[registries]] list (typed keys and comment-keeping edits come with the
// `config` and `registry` commands).
package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/pelletier/go-toml/v2"
)

// FileName is the settings file's name inside $AGENTPACK_HOME.
const FileName = "config.toml"

// Settings is a loaded config.toml.
type Settings struct {
	sys  fsys.System
	path fsys.AbsPath
	raw  []byte
	env  func(string) (string, bool)
	// registries are the [[registries]] entries, in file order.
	registries []registry.Config
}

// Load reads home/config.toml (a missing file is empty settings). env looks
// up environment overrides (nil: none).
func Load(sys fsys.System, home fsys.AbsPath, env func(string) (string, bool)) (*Settings, error) {
	s := &Settings{sys: sys, path: home.JoinName(FileName), env: env}
	raw, err := sys.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, err
	}
	var doc struct {
		Registries []struct {
			Name    string `toml:"name"`
			URL     string `toml:"url"`
			Type    string `toml:"type"`
			Default bool   `toml:"default"`
		} `toml:"registries"`
	}
	if err := toml.Unmarshal(raw, &doc); err != nil {
		e := apperr.Wrap(err, apperr.ConfigInvalid, "%s is not valid TOML", s.path).WithHint("fix the file's syntax").With("path", s.path.String())
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			e = e.With("line", line)
		}
		return nil, e
	}
	for i, r := range doc.Registries {
		if r.Name == "" || r.URL == "" {
			return nil, apperr.New(apperr.ConfigInvalid, "%s: registries[%d] needs a name and a url", s.path, i).
				WithHint("give every [[registries]] entry name = \"…\" and url = \"…\"").With("path", s.path.String())
		}
		typ := r.Type
		if typ == "" {
			typ = "local"
			if strings.HasPrefix(r.URL, "oci://") {
				typ = "oci"
			}
		}
		s.registries = append(s.registries, registry.Config{Name: r.Name, URL: r.URL, Type: typ, Default: r.Default})
	}
	s.raw = raw
	return s, nil
}

// Path is the config.toml path.
func (s *Settings) Path() fsys.AbsPath { return s.path }

// Registries returns the [[registries]] entries in file order.
func (s *Settings) Registries() []registry.Config { return s.registries }

// AddRegistry appends a [[registries]] entry for cfg to the config.toml at
// path, keeping every other byte; with cfg.Default the other entries stop
// being default. A name already used is E_INVALID_ARGUMENT.
func AddRegistry(sys fsys.System, path fsys.AbsPath, cfg registry.Config) error {
	s, err := Load(sys, path.Dir(), nil)
	if err != nil {
		return err
	}
	for _, r := range s.registries {
		if r.Name == cfg.Name {
			return apperr.New(apperr.InvalidArgument, "a registry called %q is already configured (%s)", cfg.Name, r.URL).
				WithHint("pick another name, or `agentpack registry remove %s` first", cfg.Name).With("name", cfg.Name)
		}
	}
	text := string(s.raw)
	if cfg.Default {
		text = clearDefaults(text)
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text != "" {
		text += "\n"
	}
	text += fmt.Sprintf("[[registries]]\nname = %q\nurl = %q\ntype = %q\n", cfg.Name, cfg.URL, cfg.Type)
	if cfg.Default {
		text += "default = true\n"
	}
	return sys.WriteFile(path, []byte(text), 0o600)
}

// RemoveRegistry cuts the [[registries]] entry called name out of the
// config.toml at path, keeping every other byte; E_REGISTRY_NOT_FOUND.
func RemoveRegistry(sys fsys.System, path fsys.AbsPath, name string) (registry.Config, error) {
	s, err := Load(sys, path.Dir(), nil)
	if err != nil {
		return registry.Config{}, err
	}
	var found *registry.Config
	idx := -1
	for i, r := range s.registries {
		if r.Name == name {
			found, idx = &s.registries[i], i
		}
	}
	if found == nil {
		return registry.Config{}, apperr.New(apperr.RegistryNotFound, "no registry is called %q", name).
			WithHint("list them with `agentpack registry list`").With("name", name)
	}
	lines := strings.SplitAfter(string(s.raw), "\n")
	start, end, n := -1, len(lines), -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "[[registries]]" {
			n++
			if n == idx {
				start = i
				continue
			}
		}
		if start >= 0 && i > start && strings.HasPrefix(t, "[") {
			end = i
			break
		}
	}
	if start < 0 {
		return registry.Config{}, apperr.New(apperr.ConfigInvalid, "%s: cannot find the [[registries]] table of %q", path, name).
			WithHint("remove it by hand")
	}
	out := strings.Join(lines[:start], "") + strings.Join(lines[end:], "")
	return *found, sys.WriteFile(path, []byte(out), 0o600)
}

// clearDefaults turns every "default = true" line of a [[registries]]
// table into "default = false".
func clearDefaults(text string) string {
	lines := strings.SplitAfter(text, "\n")
	in := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			in = t == "[[registries]]"
		}
		if in && strings.ReplaceAll(t, " ", "") == "default=true" {
			lines[i] = strings.Replace(l, "true", "false", 1)
		}
	}
	return strings.Join(lines, "")
}
