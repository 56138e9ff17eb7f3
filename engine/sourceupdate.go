package engine

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"go.yaml.in/yaml/v3"
)

// SourceUpdateOptions are the arguments of `agentpack source update`.
type SourceUpdateOptions struct {
	// Name is the source to update; All updates every source instead.
	Name string
	All  bool
}

// SourceUpdate is one source of the update data.
type SourceUpdate struct {
	Name       string `json:"name"`
	URL        string `json:"url"`
	Ref        string `json:"ref"`
	FromCommit string `json:"from_commit"`
	ToCommit   string `json:"to_commit"`
	Changed    bool   `json:"changed"`
}

// RelockedModule is a module re-locked because its source moved.
type RelockedModule struct {
	ID string `json:"id"`
	// Source is the artifact source whose update re-locked it.
	Source string `json:"source"`
	// FromCommit is the commit the lockfile pinned before ("" when the
	// module was not locked); ToCommit the one it pins now.
	FromCommit string `json:"from_commit"`
	ToCommit   string `json:"to_commit"`
	// RefRewritten says the module's ref was the source's old commit and
	// was set to the new one in agentpack.yaml.
	RefRewritten bool `json:"ref_rewritten"`
}

// SourceUpdateData is the data of `agentpack source update`.
type SourceUpdateData struct {
	Updated           []SourceUpdate   `json:"updated"`
	Relocked          []RelockedModule `json:"relocked"`
	ManifestPath      string           `json:"manifest_path"`
	ManifestPathPosix string           `json:"manifest_path_posix"`
	Lockfile          string           `json:"lockfile"`
	LockfilePosix     string           `json:"lockfile_posix"`
	DryRun            bool             `json:"dry_run"`
}

// SourceUpdate moves each selected source's pin to the commit its ref names
// now and re-locks the modules that use a moved source. A module whose ref
// is the source's old commit (as `source candidates` suggests) gets the new
// commit as its ref; others are re-resolved from their own ref. Other
// modules' lock entries are left alone.
func (e *Engine) SourceUpdate(ctx context.Context, req Request, opt SourceUpdateOptions) (*SourceUpdateData, []string, error) {
	if (opt.Name == "") == !opt.All {
		return nil, nil, apperr.New(apperr.InvalidArgument, "give either a source name or --all").
			WithHint("run `agentpack source update <name>` or `agentpack source update --all`")
	}
	var out *SourceUpdateData
	var warnings []string
	ctx = withCheckouts(ctx)
	e.prefetchSources(ctx, req, opt.Name, opt.All) // fetches run outside the state lock
	err := e.withCheckedLock(ctx, "source update", func(recovered []string) error {
		warnings = recovered
		m, err := e.loadSources(ctx, req)
		if err != nil {
			return err
		}
		warnings = append(warnings, m.Warnings...)
		srcs := m.Sources
		if !opt.All {
			src, err := findSource(m, opt.Name)
			if err != nil {
				return err
			}
			srcs = []manifest.ArtifactSource{*src}
		}
		lfPath := filepath.Join(m.Dir, lockfile.FileName)
		out = &SourceUpdateData{Updated: []SourceUpdate{}, Relocked: []RelockedModule{}, ManifestPath: m.Path,
			ManifestPathPosix: filepath.ToSlash(m.Path), Lockfile: lfPath, LockfilePosix: filepath.ToSlash(lfPath), DryRun: e.dryRun()}
		md, err := manifest.OpenDoc(e.Sys, abs(m.Path), e.Adapters.Names())
		if err != nil {
			return err
		}
		relock, err := e.moveSources(ctx, m, md, srcs, out)
		if err != nil {
			return err
		}
		lf, err := e.relock(ctx, m, relock, out)
		if err != nil {
			return err
		}
		if len(out.Updated) > 0 && anyChanged(out.Updated) {
			if err := md.Save(e.Sys); err != nil {
				return err
			}
		}
		if lf != nil {
			return lf.SaveOn(e.Sys, abs(lfPath))
		}
		return nil
	})
	return out, append(warnings, e.takeRepairs()...), err
}

func anyChanged(us []SourceUpdate) bool {
	for _, u := range us {
		if u.Changed {
			return true
		}
	}
	return false
}

// moveSources resolves each source's ref, records the move in out and in
// the manifest document, and returns the modules to re-lock (with their
// refs already moved when they named the old commit).
func (e *Engine) moveSources(ctx context.Context, m *manifest.Manifest, md *manifest.Doc, srcs []manifest.ArtifactSource, out *SourceUpdateData) ([]relockItem, error) {
	var items []relockItem
	seen := map[string]bool{}
	for _, src := range srcs {
		commit, _, err := e.checkout(ctx, src.URL, src.Ref)
		if err != nil {
			return nil, err
		}
		u := SourceUpdate{Name: src.Name, URL: src.URL, Ref: src.Ref, FromCommit: src.Commit, ToCommit: commit,
			Changed: !strings.EqualFold(src.Commit, commit)}
		out.Updated = append(out.Updated, u)
		if !u.Changed {
			continue
		}
		if item := seqItem(md.List("sources"), "name", src.Name); item != nil {
			setKey(item, "commit", commit)
		}
		for _, id := range modulesUsing(m, src) {
			if seen[id] {
				continue
			}
			seen[id] = true
			mod := *moduleByID(m, id)
			g := *mod.Source.Git
			it := relockItem{mod: mod, source: src.Name}
			if src.Commit != "" && strings.EqualFold(g.Ref, src.Commit) {
				g.Ref, it.rewritten = commit, true
				if node := seqItem(md.List("modules"), "id", id); node != nil {
					if gn := mapGet(mapGet(node, "source"), "git"); gn != nil {
						setKey(gn, "ref", commit)
					}
				}
			}
			it.mod.Source.Git = &g
			items = append(items, it)
		}
	}
	return items, nil
}

type relockItem struct {
	mod       module.Module
	source    string
	rewritten bool
}

// relock locks items into the existing lockfile (or a new one) and records
// them in out; it returns nil when there is nothing to re-lock.
func (e *Engine) relock(ctx context.Context, m *manifest.Manifest, items []relockItem, out *SourceUpdateData) (*lockfile.Lockfile, error) {
	if len(items) == 0 {
		return nil, nil
	}
	lf, err := lockfile.LoadOn(e.Sys, abs(filepath.Join(m.Dir, lockfile.FileName)))
	if apperr.CodeOf(err) == apperr.LockfileMissing {
		lf, err = lockfile.New(), nil
	}
	if err != nil {
		return nil, err
	}
	sub := &manifest.Manifest{}
	for _, it := range items {
		sub.Modules = append(sub.Modules, it.mod)
	}
	fresh, err := e.lockModules(ctx, sub, m.Dir, nil) // update moves pins
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		r := RelockedModule{ID: it.mod.ID, Source: it.source, RefRewritten: it.rewritten}
		if old := lf.Find(it.mod.ID); old != nil && old.ResolvedSource.Git != nil {
			r.FromCommit = old.ResolvedSource.Git.Commit
		}
		if nm := fresh.Find(it.mod.ID); nm != nil {
			r.ToCommit = nm.ResolvedVersion
			lf.Upsert(*nm)
		}
		out.Relocked = append(out.Relocked, r)
	}
	return lf, nil
}

func moduleByID(m *manifest.Manifest, id string) *module.Module {
	for i := range m.Modules {
		if m.Modules[i].ID == id {
			return &m.Modules[i]
		}
	}
	return nil
}

// findModule is moduleByID, refusing an id the manifest lacks with
// E_MODULE_NOT_FOUND naming the ids it has.
func findModule(m *manifest.Manifest, id string) (*module.Module, error) {
	if mod := moduleByID(m, id); mod != nil {
		return mod, nil
	}
	ids := make([]string, len(m.Modules))
	for i := range m.Modules {
		ids[i] = m.Modules[i].ID
	}
	return nil, apperr.New(apperr.ModuleNotFound, "no module %q in agentpack.yaml", id).
		WithHint("pick one of: %s", strings.Join(ids, ", ")).With("module_id", id)
}

// seqItem returns the mapping in seq whose key has value v.
func seqItem(seq *yaml.Node, key, v string) *yaml.Node {
	for _, item := range seq.Content {
		if item.Kind == yaml.MappingNode && manifest.ItemField(item, key) == v {
			return item
		}
	}
	return nil
}

// mapGet returns the value of key in mapping n (nil when absent).
func mapGet(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// setKey sets key to the string v in mapping n, appending it when absent.
func setKey(n *yaml.Node, key, v string) {
	if cur := mapGet(n, key); cur != nil {
		cur.Kind, cur.Tag, cur.Value, cur.Content = yaml.ScalarNode, "!!str", v, nil
		return
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
}
