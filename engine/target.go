package engine

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/agentpack/agentpack/internal/apperr"
)

// Target is an adapter that maps modules to files for one AI tool. Adapters
// live in package targets and register themselves with [Register]; the engine
// never imports them.
type Target interface {
	// Name is the target's manifest key, e.g. "codex".
	Name() string
	// Supports reports whether the adapter renders modules of type t.
	Supports(t ModuleType) bool
	// Validate checks the target's config (scope, options) before any render.
	Validate(cfg TargetConfig) error
	// Render returns the managed roots and the desired files for modules,
	// which are the selected modules of supported types, in id order.
	Render(rc *RenderContext, modules []*LoadedModule) (*TargetOutput, error)
}

// RenderContext is what an adapter may know about the world.
type RenderContext struct {
	Target string
	Config TargetConfig
	// Scope is Config.Scope with the adapter's default applied.
	Scope       Scope
	Home        string
	CodexHome   string // $CODEX_HOME, "" when unset
	ProjectRoot string
	Machine     string
	// FS reads existing files (for key-level merges and adopted files).
	FS interface {
		ReadFile(path string) ([]byte, error)
		Lstat(path string) (fs.FileInfo, error)
	}
	warnings *[]string
}

// Warn records a warning that ends up in the envelope.
func (rc *RenderContext) Warn(format string, args ...any) {
	if rc.warnings != nil {
		*rc.warnings = append(*rc.warnings, fmt.Sprintf("%s: ", rc.Target)+fmt.Sprintf(format, args...))
	}
}

// ExpandHome expands a leading ~ against Home.
func (rc *RenderContext) ExpandHome(p string) string {
	return Env{Home: rc.Home}.ExpandHome(p)
}

// TargetOutput is an adapter's result.
type TargetOutput struct {
	// Roots are the folders this target manages; each gets a manifest
	// .agentpack.manifest.<target>.json. Every file lies under some root.
	Roots []Root
	Files []DesiredFile
}

// Root is one managed folder.
type Root struct {
	Path string
	// ScanExtras makes status report unmanaged files in this folder (only
	// folders agentpack fully owns, like a skills dir; never $HOME).
	ScanExtras bool
}

// DesiredFile is one file the desired state wants on disk.
type DesiredFile struct {
	Path      string // absolute
	Data      []byte
	Mode      fs.FileMode
	ModuleIDs []string
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Target{}
)

// Register adds a target adapter. It panics on a duplicate name, which is a
// programming error caught by any test.
func Register(t Target) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[t.Name()]; dup {
		panic("agentpack: target registered twice: " + t.Name())
	}
	registry[t.Name()] = t
}

// Targets returns the registered target names, sorted.
func Targets() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LookupTarget returns a registered adapter.
func LookupTarget(name string) (Target, error) {
	registryMu.RLock()
	t, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, apperr.New(apperr.TargetUnsupported, "unknown target %q", name).
			WithHint("supported targets: %s, or all", strings.Join(Targets(), ", ")).With("target", name)
	}
	return t, nil
}

// OptionBool reads a boolean target option (YAML bools, or "true"/"false"
// strings as the original accepted), else def.
func (c TargetConfig) OptionBool(key string, def bool) bool {
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
func (c TargetConfig) OptionString(key, def string) string {
	if v, ok := c.Options[key].(string); ok && strings.TrimSpace(v) != "" {
		return v
	}
	return def
}
