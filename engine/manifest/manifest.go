// Package manifest is agentpack.yaml: its model ([Manifest]), its strict
// parse ([Load], [Parse]) and the edits that keep the file's comments and
// layout ([Doc]).
package manifest

import (
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
)

// FileName is the desired-state repo's manifest name.
const FileName = "agentpack.yaml"

// Manifest is a parsed agentpack.yaml (version 1).
type Manifest struct {
	Version  int                      `yaml:"version" json:"version"`
	Profiles map[string]Profile       `yaml:"profiles" json:"profiles"`
	Targets  map[string]target.Config `yaml:"targets" json:"targets"`
	Modules  []module.Module          `yaml:"modules" json:"modules"`
	Sources  []ArtifactSource         `yaml:"sources,omitempty" json:"sources,omitempty"`
	// Packages are the directly installed packages; their artifacts (and
	// those of their dependencies) become modules at load time.
	Packages []PackageEntry `yaml:"packages,omitempty" json:"packages,omitempty"`

	// Path is the absolute path of the file; Dir its repo folder.
	Path string `yaml:"-" json:"-"`
	Dir  string `yaml:"-" json:"-"`
	// Warnings are non-fatal findings (unknown top-level keys, ...).
	Warnings []string `yaml:"-" json:"-"`
	// Lines maps module id to its line in the file, for error messages.
	Lines map[string]int `yaml:"-" json:"-"`
}

// Profile selects modules.
type Profile struct {
	IncludeTags    []string `yaml:"include_tags,omitempty" json:"include_tags"`
	IncludeModules []string `yaml:"include_modules,omitempty" json:"include_modules"`
	ExcludeModules []string `yaml:"exclude_modules,omitempty" json:"exclude_modules"`
}

// ArtifactSource is a registered git repo scanned for artifacts (SPEC §10).
type ArtifactSource struct {
	Name   string `yaml:"name" json:"name"`
	URL    string `yaml:"url" json:"url"`
	Ref    string `yaml:"ref,omitempty" json:"ref,omitempty"`
	Path   string `yaml:"path,omitempty" json:"path,omitempty"`
	Commit string `yaml:"commit,omitempty" json:"commit,omitempty"`
}

// SelectModules returns the enabled modules the profile selects, in id order.
func (m *Manifest) SelectModules(profile string) ([]*module.Module, error) {
	p, ok := m.Profiles[profile]
	if !ok {
		names := make([]string, 0, len(m.Profiles))
		for n := range m.Profiles {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, apperr.New(apperr.InvalidArgument, "unknown profile %q", profile).
			WithHint("profiles in agentpack.yaml: %s", strings.Join(names, ", ")).With("profile", profile)
	}
	var out []*module.Module
	for i := range m.Modules {
		mod := &m.Modules[i]
		if !mod.IsEnabled() || slices.Contains(p.ExcludeModules, mod.ID) {
			continue
		}
		if slices.Contains(p.IncludeModules, mod.ID) || intersects(p.IncludeTags, mod.Tags) {
			out = append(out, mod)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// TargetNames returns the configured target names, sorted.
func (m *Manifest) TargetNames() []string {
	out := make([]string, 0, len(m.Targets))
	for n := range m.Targets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func moduleIDs(m *Manifest) []string {
	out := make([]string, len(m.Modules))
	for i, x := range m.Modules {
		out[i] = x.ID
	}
	return out
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
