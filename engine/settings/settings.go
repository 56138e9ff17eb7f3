// Package settings reads $AGENTPACK_HOME/config.toml: for now the
// [[registries]] list (typed keys and comment-keeping edits come with the
// `config` and `registry` commands).
package settings

import (
	"errors"
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
