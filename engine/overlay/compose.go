package overlay

import (
	"fmt"
	"sort"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Layer is one overlay folder to apply.
type Layer struct {
	Scope Scope
	Dir   fsys.AbsPath
}

// Composed is a module's files after its overlays.
type Composed struct {
	Files []module.File
	// Origins names, for each file an overlay set or patched, the highest
	// layer that did; files absent here are upstream's.
	Origins map[string]Scope
	// Warnings say where upstream changed under an overlay's edits since
	// its baseline.
	Warnings []string
}

// Compose applies the layers (lowest first) to a module's upstream files.
// Folders that do not exist are skipped.
func Compose(sys fsys.System, repo fsys.AbsPath, moduleID string, upstream []module.File, layers []Layer) (*Composed, error) {
	var byPath map[string]module.File // built once an overlay folder exists
	out := &Composed{Origins: map[string]Scope{}}
	var upstreamHashes map[string]string
	for _, l := range layers {
		ok, err := checkDir(sys, repo, l.Dir)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if byPath == nil {
			byPath = make(map[string]module.File, len(upstream))
			for _, f := range upstream {
				byPath[f.Path] = f
			}
		}
		k, err := readKind(sys, moduleID, l)
		if err != nil {
			return nil, err
		}
		var touched []string
		if k.kind == KindDir {
			for _, f := range k.overrides {
				byPath[f.Path] = f
				out.Origins[f.Path] = l.Scope
				touched = append(touched, f.Path)
			}
		} else {
			for _, p := range k.patches {
				rel := patchTarget(p.Path)
				cur, ok := byPath[rel]
				if !ok {
					return nil, apperr.New(apperr.OverlayPatchApplyFailed, "module %s (%s overlay): patch for %s, but the module has no such file", moduleID, l.Scope, rel).
						WithHint("patch overlays change existing upstream files; delete .agentpack/patches/%s or use a dir overlay", p.Path).
						With("module_id", moduleID).With("scope", string(l.Scope)).With("path", rel)
				}
				data, err := applyPatch(l.Dir, l.Scope, moduleID, rel, p.Data, cur.Data)
				if err != nil {
					return nil, err
				}
				cur.Data, cur.Src, cur.SHA256 = data, "", ""
				byPath[rel] = cur
				out.Origins[rel] = l.Scope
				touched = append(touched, rel)
			}
		}
		w, err := driftWarnings(sys, moduleID, l, touched, func() map[string]string {
			if upstreamHashes == nil {
				entries, _ := TreeHash(upstream)
				upstreamHashes = make(map[string]string, len(entries))
				for _, e := range entries {
					upstreamHashes[e.Path] = e.SHA256
				}
			}
			return upstreamHashes
		})
		if err != nil {
			return nil, err
		}
		out.Warnings = append(out.Warnings, w...)
	}
	if byPath == nil {
		// No overlay folder: the upstream files as they are, without a
		// copy (most modules of most repos).
		out.Files = upstream
		return out, nil
	}
	for _, f := range byPath {
		out.Files = append(out.Files, f)
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	return out, nil
}

// kindFiles is an overlay folder's kind with its files of that kind.
type kindFiles struct {
	kind      Kind
	overrides []module.File
	patches   []module.File
}

// readKind reads an overlay's files, refusing one that mixes replacement
// files and patches or whose files disagree with its overlay.json.
func readKind(sys fsys.System, moduleID string, l Layer) (*kindFiles, error) {
	meta, err := ReadMeta(sys, l.Dir)
	if err != nil {
		return nil, err
	}
	k := &kindFiles{kind: meta.Kind}
	if k.overrides, err = listFiles(sys, l.Dir); err != nil {
		return nil, err
	}
	if k.patches, err = patchFiles(sys, l.Dir); err != nil {
		return nil, err
	}
	mixed := ""
	switch {
	case len(k.overrides) > 0 && len(k.patches) > 0:
		mixed = "it holds both replacement files and patches"
	case meta.Kind == KindDir && len(k.patches) > 0:
		mixed = "overlay.json says dir but it holds patches"
	case meta.Kind == KindPatch && len(k.overrides) > 0:
		mixed = "overlay.json says patch but it holds replacement files"
	}
	if mixed != "" {
		return nil, apperr.New(apperr.ConfigInvalid, "the %s overlay of module %s mixes kinds: %s", l.Scope, moduleID, mixed).
			WithHint("use one kind per overlay folder: move edits into .agentpack/patches/*.patch, or set overlay_kind in .agentpack/overlay.json").
			With("module_id", moduleID).With("scope", string(l.Scope)).With("overlay_dir", l.Dir.String())
	}
	return k, nil
}

// driftWarnings names the files an overlay changes whose upstream changed
// since its baseline: its edits may now hide upstream fixes.
// upstreamHashes gives the upstream hashes by path; it is called only when
// the overlay has a baseline to compare them with.
func driftWarnings(sys fsys.System, moduleID string, l Layer, touched []string, upstreamHashes func() map[string]string) ([]string, error) {
	b, ok, err := ReadBaseline(sys, l.Dir)
	if err != nil {
		// A damaged baseline only matters to rebase; the overlay still applies.
		return []string{fmt.Sprintf("overlay (%s) module %s: %v", l.Scope, moduleID, err)}, nil
	}
	if !ok {
		return nil, nil
	}
	upstream := upstreamHashes()
	base := map[string]string{}
	for _, e := range b.FileManifest {
		base[e.Path] = e.SHA256
	}
	var out []string
	for _, rel := range touched {
		was, known := base[rel]
		now, still := upstream[rel]
		switch {
		case !known:
		case !still:
			out = append(out, fmt.Sprintf("overlay drift (%s) module %s: upstream removed %s; run `agentpack overlay rebase %s --scope %s`", l.Scope, moduleID, rel, moduleID, l.Scope))
		case was != now:
			out = append(out, fmt.Sprintf("overlay drift (%s) module %s: upstream changed %s since the overlay's baseline; run `agentpack overlay rebase %s --scope %s`", l.Scope, moduleID, rel, moduleID, l.Scope))
		}
	}
	return out, nil
}
