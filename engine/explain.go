package engine

import (
	"context"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// ExplainModule names a module and where it came from.
type ExplainModule struct {
	ID     string      `json:"id"`
	Type   module.Type `json:"type"`
	Source string      `json:"source"`
	// Layer is the layer whose version of the file won: upstream, or the
	// global, machine or project overlay.
	Layer string `json:"layer"`
}

// ExplainItem is one path with the modules that produced it.
type ExplainItem struct {
	Target    string          `json:"target"`
	Path      fsys.AbsPath    `json:"path"`
	PathPosix string          `json:"path_posix"`
	Op        string          `json:"op,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	ModuleIDs []string        `json:"module_ids"`
	Modules   []ExplainModule `json:"modules"`
}

// ExplainData is the data of `agentpack explain`.
type ExplainData struct {
	Kind    string        `json:"kind"`
	Profile string        `json:"profile"`
	Targets []string      `json:"targets"`
	Items   []ExplainItem `json:"items"`
}

// Explain says, for each path of the plan (or of status drift), which
// modules and sources produced it.
func (e *Engine) Explain(ctx context.Context, req Request, kind string) (*State, *ExplainData, error) {
	switch kind {
	case "plan", "diff", "status":
	default:
		return nil, nil, apperr.New(apperr.InvalidArgument, "explain takes plan, diff or status, not %q", kind).
			WithHint("run `agentpack explain plan`")
	}
	st, p, err := e.planWith(ctx, req, e.Load, true) // the modules are needed, not only the compiled state
	if err != nil {
		return st, nil, err
	}
	out := &ExplainData{Kind: kind, Profile: st.Profile, Targets: st.Targets, Items: []ExplainItem{}}
	byID := map[string]*module.LoadedModule{}
	for _, m := range st.Modules {
		byID[m.ID] = m
	}
	item := func(target string, path fsys.AbsPath, ids []string) ExplainItem {
		it := ExplainItem{Target: target, Path: path, PathPosix: path.ToSlash(), ModuleIDs: nonNil(ids), Modules: []ExplainModule{}}
		for _, id := range ids {
			em := ExplainModule{ID: id, Source: "(not in the current profile)"}
			if m := byID[id]; m != nil {
				em.Type, em.Source, em.Layer = m.Type, m.Source.String(), layerOf(m, path)
			} else {
				for _, mm := range st.Manifest.Modules {
					if mm.ID == id {
						em.Type, em.Source = mm.Type, mm.Source.String()
					}
				}
			}
			it.Modules = append(it.Modules, em)
		}
		return it
	}
	if kind != "status" {
		for _, c := range p.Changes {
			it := item(c.Target, c.Path, c.ModuleIDs)
			it.Op = c.Op
			out.Items = append(out.Items, it)
		}
		return st, out, nil
	}
	for _, d := range e.status(st, p, nil).Drift { // the same plan: no second load
		var ids []string
		if f := st.Desired.File(d.Path); f != nil {
			ids = f.ModuleIDs
		} else if m, ok := p.Managed[d.Path]; ok {
			ids = m.ModuleIDs
		}
		it := item(d.Target, d.Path, ids)
		it.Kind = d.Kind
		out.Items = append(out.Items, it)
	}
	return st, out, nil
}

// layerOf names the layer that set the module file deployed at path: the
// module's main file for one-file outputs, else the file whose relative
// path ends path (a skill's files).
func layerOf(m *module.LoadedModule, path fsys.AbsPath) string {
	if m.Type != module.TypeSkill && m.Main != nil {
		if l, ok := m.Origins[m.Main.Path]; ok {
			return l
		}
		return "upstream"
	}
	p := path.ToSlash()
	best, layer := 0, "upstream"
	for rel, l := range m.Origins {
		if strings.HasSuffix(p, "/"+rel) && len(rel) > best {
			best, layer = len(rel), l
		}
	}
	return layer
}

// nonNil makes a nil list JSON [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
