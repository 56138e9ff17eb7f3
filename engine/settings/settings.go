// Package settings reads and edits $AGENTPACK_HOME/config.toml: typed keys
// and the [[registries]] list. Edits keep the file's comments.
package settings

import (
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// FileName is the settings file's name inside $AGENTPACK_HOME.
const FileName = "config.toml"

// Key describes one setting.
type Key struct {
	Name string
	// Type is "string", "bool" or "list".
	Type    string
	Default any
	Help    string
}

// Value is a setting's effective value and where it came from.
type Value struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"` // default | global | env
}

// Settings is a loaded config.toml.
type Settings struct {
	sys  fsys.System
	path fsys.AbsPath
	raw  []byte
	env  func(string) (string, bool)
}

// Load reads home/config.toml (a missing file is empty settings). env looks
// up environment overrides (nil: none).
func Load(sys fsys.System, home fsys.AbsPath, env func(string) (string, bool)) (*Settings, error) {
	return nil, apperr.New(apperr.Unexpected, "settings are not implemented yet")
}

// Path is the config.toml path.
func (s *Settings) Path() fsys.AbsPath { return s.path }

// Get returns the effective value of key; E_INVALID_ARGUMENT for an unknown key.
func (s *Settings) Get(key string) (Value, error) { return Value{}, nil }

// List returns every key's effective value, in key order.
func (s *Settings) List() []Value { return nil }

// Set parses value for key's type and writes it into config.toml,
// keeping the file's comments.
func (s *Settings) Set(key, value string) (Value, error) { return Value{}, nil }

// Registries returns the [[registries]] entries in file order.
func (s *Settings) Registries() []registry.Config { return nil }

// AddRegistry appends (or replaces, by name) a registry entry; def makes it
// the only default.
func (s *Settings) AddRegistry(cfg registry.Config) error { return nil }

// RemoveRegistry deletes the entry called name; E_REGISTRY_NOT_FOUND.
func (s *Settings) RemoveRegistry(name string) error { return nil }
