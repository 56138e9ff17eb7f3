package target

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Adapter maps modules to files for one AI tool (a target). Adapters
// live in package targets and reach the engine in a [Set]; the engine
// never imports them.
type Adapter interface {
	// Name is the target's manifest key, e.g. "codex".
	Name() string
	// Supports reports whether the adapter renders modules of type t.
	Supports(t module.Type) bool
	// Validate checks the target's config (scope, options) before any render.
	Validate(cfg Config) error
	// Render returns the managed roots and the desired files for modules,
	// which are the selected modules of supported types, in id order.
	Render(rc *RenderContext, modules []*module.LoadedModule) (*Output, error)
}

// RenderContext is what an adapter may know about the world.
type RenderContext struct {
	Target string
	Config Config
	// Scope is Config.Scope with the adapter's default applied.
	Scope Scope
	Home  fsys.AbsPath
	// CodexHome is $CODEX_HOME as set ("" when unset); it may start with ~.
	CodexHome   string
	ProjectRoot fsys.AbsPath
	Machine     string
	// FS reads existing files (for key-level merges and adopted files): the
	// read-only part of the engine's [fsys.System].
	FS interface {
		ReadFile(path fsys.AbsPath) ([]byte, error)
		Lstat(path fsys.AbsPath) (fs.FileInfo, error)
	}
	// OnWarn receives the adapter's warnings, prefixed with the target name.
	OnWarn func(string)
}

// Warn records a warning that ends up in the envelope.
func (rc *RenderContext) Warn(format string, args ...any) {
	if rc.OnWarn != nil {
		rc.OnWarn(fmt.Sprintf("%s: ", rc.Target) + fmt.Sprintf(format, args...))
	}
}

// ExpandHome expands a leading ~ against Home; any other path, relative
// ones included, is returned as it is.
func (rc *RenderContext) ExpandHome(p string) string {
	if p == "~" {
		return rc.Home.String()
	}
	if strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		return filepath.Join(rc.Home.String(), p[2:])
	}
	return p
}

// Output is an adapter's result.
type Output struct {
	// Roots are the folders this target manages; each gets a manifest
	// .agentpack.manifest.<target>.json. Every file lies under some root.
	Roots []Root
	Files []DesiredFile
}

// Root is one managed folder.
type Root struct {
	Path fsys.AbsPath
	// ScanExtras makes status report unmanaged files in this folder (only
	// folders agentpack fully owns, like a skills dir; never $HOME).
	ScanExtras bool
}

// DesiredFile is one file the desired state wants on disk.
type DesiredFile struct {
	Path      fsys.AbsPath
	Data      []byte
	Mode      fs.FileMode
	ModuleIDs []string
	// Keyed, when set, makes this a shared config file that agentpack owns
	// entry by entry (MCP servers in a client's config): Data is unused, and
	// plan computes the file's new text from its current text by editing
	// only these entries (see [KeyedFile]).
	Keyed *KeyedFile
	// Marked says that only the file's agentpack blocks are agentpack's
	// (an aggregated instructions file): drift is measured on them
	// ([OwnedSHA256]) and the text around them is the user's, which the
	// adapter keeps.
	Marked bool
	// Src, when set, is a source file whose bytes Data is, byte for byte
	// (a module file copied verbatim): a cache keeps the path and the
	// hash instead of the bytes, and reads them again only to write or
	// diff the file.
	Src fsys.AbsPath
	// SrcSHA256 is the hex sha256 of Src's bytes when the loader hashed
	// them as it read, so they are not hashed twice.
	SrcSHA256 string
	// SrcUse is what loading the module did with Src's bytes ([module.File]'s
	// Use): when it is not [module.UseParsed], no file but copies is made
	// from them, so a cache may take an edit of the source as a new hash for
	// its copies without compiling again. An adapter that copies a module
	// file sets it from the file's Use, and makes nothing else from a file
	// whose Use is not UseParsed (its SHA256 included): a skill's files, for
	// one, are only ever copied.
	SrcUse module.Use
}

// Set is the adapters an engine knows, by name. It is a value handed to
// the engine (no package-level registry), so tests and other programs can
// build engines with other adapters.
type Set struct {
	byName map[string]Adapter
	names  []string
}

// NewSet returns a Set of ts. It panics on a duplicate name, which is a
// programming error caught by any test.
func NewSet(ts ...Adapter) *Set {
	s := &Set{byName: map[string]Adapter{}}
	for _, t := range ts {
		if _, dup := s.byName[t.Name()]; dup {
			panic("agentpack: target registered twice: " + t.Name())
		}
		s.byName[t.Name()] = t
		s.names = append(s.names, t.Name())
	}
	sort.Strings(s.names)
	return s
}

// Names returns the adapters' names, sorted.
func (s *Set) Names() []string { return append([]string(nil), s.names...) }

// Lookup returns the adapter called name, or E_TARGET_UNSUPPORTED.
func (s *Set) Lookup(name string) (Adapter, error) {
	if t, ok := s.byName[name]; ok {
		return t, nil
	}
	return nil, apperr.New(apperr.TargetUnsupported, "unknown target %q", name).
		WithHint("supported targets: %s, or all", strings.Join(s.names, ", ")).With("target", name)
}

// OptionBool reads a boolean target option (YAML bools, or "true"/"false"
// strings as the original accepted), else def.
func (c Config) OptionBool(key string, def bool) bool {
	switch v := c.Options[key].(type) {
	case bool:
		return v
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "yes", "1":
			return true
		case "false", "no", "0":
			return false
		}
	}
	return def
}

// OptionString reads a string target option, else def.
func (c Config) OptionString(key, def string) string {
	if v, ok := c.Options[key].(string); ok && strings.TrimSpace(v) != "" {
		return v
	}
	return def
}

// Config is one entry of the manifest's targets map.
type Config struct {
	Mode    string         `yaml:"mode,omitempty" json:"mode"`
	Scope   Scope          `yaml:"scope,omitempty" json:"scope"`
	Options map[string]any `yaml:"options,omitempty" json:"options"`
}

// Scope says which roots a target writes.
type Scope string

// Scopes.
const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
	ScopeBoth    Scope = "both"
)

// User reports whether the scope includes user-level roots.
func (s Scope) User() bool { return s == ScopeUser || s == ScopeBoth }

// Project reports whether the scope includes project-level roots.
func (s Scope) Project() bool { return s == ScopeProject || s == ScopeBoth }

// ScopeDefaulter is implemented by adapters whose default scope is not
// "both" (project-only targets).
type ScopeDefaulter interface{ DefaultScope() Scope }
