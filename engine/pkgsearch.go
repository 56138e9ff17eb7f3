package engine

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/engine/settings"
	"github.com/agentpack/agentpack/internal/apperr"
)

// SearchData is the data of `agentpack search`.
type SearchData struct {
	Results     []registry.Scored `json:"results"`
	Total       int               `json:"total"`
	Suggestions []string          `json:"suggestions"`
}

// openAll opens every configured registry (or only the one named).
func (e *Engine) openAll(name string) ([]registry.Registry, error) {
	s, err := settings.Load(e.Sys, abs(e.Env.AgentpackHome), os.LookupEnv)
	if err != nil {
		return nil, err
	}
	regs := s.Registries()
	if len(regs) == 0 {
		return nil, errNoRegistry()
	}
	var out []registry.Registry
	for _, cfg := range regs {
		if name != "" && cfg.Name != name {
			continue
		}
		r, err := registry.Open(cfg, e.Sys)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, errRegistryNotFound(name, regs)
	}
	return out, nil
}

// Search scores every package of every registry, and every artifact of the
// artifact sources of req's agentpack.yaml (unless only names a registry),
// against query: exact name 100, name prefix 80, name contains 60, keyword
// 50, description 30, ties by name; typ keeps packages holding that
// artifact type; limit is 1–50. A registry or source that cannot be read
// is a warning; all registries failing is E_REGISTRY_UNREACHABLE.
func (e *Engine) Search(ctx context.Context, req Request, query, typ string, limit int, only string) (*SearchData, []string, error) {
	if limit == 0 {
		limit = 10
	}
	if limit < 1 || limit > 50 {
		return nil, nil, apperr.New(apperr.InvalidArgument, "--limit must be between 1 and 50, got %d", limit).With("limit", limit)
	}
	if typ != "" && !validType(typ) {
		return nil, nil, apperr.New(apperr.InvalidArgument, "unknown artifact type %q", typ).
			WithHint("use one of skill, agent, prompt, instruction, command, mcp")
	}
	var hits []registry.Scored
	var warnings, failed []string
	if only == "" {
		hits, warnings = e.sourceHits(ctx, req)
	}
	regs, err := e.openAll(only)
	if apperr.CodeOf(err) == apperr.RegistryNotConfigured && len(hits) > 0 {
		regs, err = nil, nil
	}
	if err != nil {
		return nil, warnings, err
	}
	byName := map[string]registry.Registry{}
	for _, r := range regs {
		byName[r.Name()] = r
		idx, err := r.Index(ctx)
		if err != nil {
			failed = append(failed, r.Name())
			warnings = append(warnings, fmt.Sprintf("registry %s could not be searched: %s", r.Name(), apperr.As(err).Message))
			continue
		}
		for _, h := range idx {
			hits = append(hits, registry.Scored{Hit: h, Registry: r.Name()})
		}
	}
	if len(regs) > 0 && len(failed) == len(regs) {
		return nil, warnings, apperr.New(apperr.RegistryUnreachable, "no registry could be searched: %s", strings.Join(failed, ", ")).
			WithHint("check them with `agentpack registry list`").With("registries", failed)
	}
	ranked := registry.Rank(hits, query, "")
	kept := ranked[:0]
	for _, h := range ranked {
		if len(h.ArtifactTypes) == 0 {
			// AAM's index says `artifact_types: []`; the archive knows.
			h.ArtifactTypes = e.archiveTypes(ctx, byName[h.Registry], h.Name, h.Version)
		}
		if typ == "" || registry.HasType(h.ArtifactTypes, typ) {
			kept = append(kept, h)
		}
	}
	ranked = kept
	out := &SearchData{Results: []registry.Scored{}, Total: len(ranked), Suggestions: []string{}}
	for i := 0; i < len(ranked) && i < limit; i++ {
		r := ranked[i]
		if r.ArtifactTypes == nil {
			r.ArtifactTypes = []string{}
		}
		out.Results = append(out.Results, r)
	}
	if len(ranked) == 0 {
		var names []string
		for _, h := range hits {
			names = append(names, h.Name)
		}
		out.Suggestions = registry.Suggest(names, query)
	}
	return out, warnings, nil
}

// archiveTypes are the artifact types the manifest of name@version in r
// declares (none when it cannot be read).
func (e *Engine) archiveTypes(ctx context.Context, r registry.Registry, name, version string) []string {
	if r == nil {
		return []string{}
	}
	archive, _, err := r.Download(ctx, name, version)
	if err != nil {
		return []string{}
	}
	a, err := aampkg.Extract(archive, aampkg.DefaultLimits)
	if err != nil {
		return []string{}
	}
	return a.Manifest.ArtifactTypes()
}

func validType(t string) bool {
	switch strings.TrimSuffix(t, "s") {
	case "skill", "agent", "prompt", "instruction", "command", "mcp":
		return true
	}
	return false
}

// InfoData is the data of `agentpack info`.
type InfoData struct {
	Name             string                       `json:"name"`
	Version          string                       `json:"version"`
	Description      string                       `json:"description"`
	Author           string                       `json:"author"`
	License          string                       `json:"license"`
	Keywords         []string                     `json:"keywords"`
	Artifacts        map[string][]aampkg.Artifact `json:"artifacts"`
	Dependencies     map[string]string            `json:"dependencies"`
	Versions         []string                     `json:"versions"`
	DistTags         map[string]string            `json:"dist_tags"`
	Registry         string                       `json:"registry"`
	Installed        bool                         `json:"installed"`
	InstalledVersion *string                      `json:"installed_version"`
}

// Info describes spec (name, name@version or name@dist-tag) from the first
// registry that has it; E_PACKAGE_NOT_FOUND with close names otherwise.
func (e *Engine) Info(ctx context.Context, req Request, spec string) (*InfoData, []string, error) {
	name, want := spec, "latest"
	if i := strings.LastIndex(spec, "@"); i > 0 {
		name, want = spec[:i], spec[i+1:]
	}
	regs, err := e.openAll("")
	if err != nil {
		return nil, nil, err
	}
	var warnings, names []string
	for _, r := range regs {
		info, err := r.Package(ctx, name)
		if apperr.CodeOf(err) == apperr.PackageNotFound {
			if idx, ierr := r.Index(ctx); ierr == nil {
				for _, h := range idx {
					names = append(names, h.Name)
				}
			}
			continue
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("registry %s: %s", r.Name(), apperr.As(err).Message))
			continue
		}
		archive, vi, err := r.Download(ctx, name, want)
		if err != nil {
			return nil, warnings, err
		}
		a, err := aampkg.Extract(archive, aampkg.DefaultLimits)
		if err != nil {
			return nil, warnings, err
		}
		m := a.Manifest
		out := &InfoData{Name: m.Name, Version: vi.Version, Description: m.Description, Author: m.Author, License: m.License,
			Keywords: nonNil(m.Keywords), Artifacts: m.Artifacts, Dependencies: m.Dependencies, DistTags: info.DistTags,
			Registry: r.Name(), Versions: []string{}}
		if out.Dependencies == nil {
			out.Dependencies = map[string]string{}
		}
		for _, v := range info.Versions {
			out.Versions = append(out.Versions, v.Version)
		}
		sort.Strings(out.Versions)
		if _, lf, err := e.installedState(ctx, req); err == nil {
			for _, p := range lf.Packages {
				if p.Name == m.Name {
					v := p.Version
					out.Installed, out.InstalledVersion = true, &v
				}
			}
		}
		return out, warnings, nil
	}
	return nil, warnings, apperr.New(apperr.PackageNotFound, "no registry has a package called %s", name).
		WithHint("search with `agentpack search %s`", name).With("package", name).With("suggestions", registry.Suggest(names, name))
}
