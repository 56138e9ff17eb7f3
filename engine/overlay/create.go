package overlay

import (
	"errors"
	"io/fs"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Fill says which upstream files `overlay edit` copies into an overlay.
type Fill int

// The fills.
const (
	// FillAll copies every upstream file into a new overlay.
	FillAll Fill = iota
	// FillSparse copies nothing: keep only the files you change.
	FillSparse
	// FillMissing copies the upstream files the overlay lacks, keeping its
	// edits (--materialize).
	FillMissing
)

// EditResult is what [Edit] did.
type EditResult struct {
	Created      bool
	Materialized bool
	// Copied are the upstream files written into the overlay.
	Copied []string
	// PatchesDir is the folder of a patch overlay's patches.
	PatchesDir fsys.AbsPath
}

// Edit creates the overlay l of a module, or completes an existing one:
// its metadata (a baseline describing upstream when it has none) and the
// upstream files fill asks for.
func Edit(sys fsys.System, repo fsys.AbsPath, moduleID string, l Layer, kind Kind, fill Fill, upstream []module.File, baseline *Baseline) (*EditResult, error) {
	existed, err := checkDir(sys, repo, l.Dir)
	if err != nil {
		return nil, err
	}
	res := &EditResult{Created: !existed}
	if existed {
		k, err := readKind(sys, moduleID, l)
		if err != nil {
			return nil, err
		}
		if k.kind != kind && (len(k.overrides) > 0 || len(k.patches) > 0) {
			return nil, apperr.New(apperr.ConfigInvalid, "the %s overlay of %s is a %s overlay with files; it cannot become a %s overlay", l.Scope, moduleID, k.kind, kind).
				WithHint("edit it as --kind %s, or move its files away first", k.kind).
				With("module_id", moduleID).With("scope", string(l.Scope)).With("overlay_dir", l.Dir.String())
		}
		if k.kind != kind {
			if err := writeJSON(sys, metaPath(l.Dir, "overlay.json"), Meta{Kind: kind}); err != nil {
				return nil, err
			}
		}
	}
	if kind == KindDir && (fill == FillMissing || fill == FillAll && !existed) {
		for _, f := range upstream {
			p := l.Dir.Join(fsys.RelPath(f.Path))
			if _, err := sys.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				continue // keep the overlay's own version
			}
			if err := sys.WriteFile(p, f.Data, f.Mode|0o600); err != nil {
				return nil, err
			}
			res.Copied = append(res.Copied, f.Path)
		}
		res.Materialized = fill == FillMissing
	}
	if err := sys.MkdirAll(l.Dir.JoinName(MetaDir), 0o755); err != nil {
		return nil, err
	}
	_, has, err := ReadBaseline(sys, l.Dir)
	if err != nil {
		return nil, err
	}
	if has {
		baseline = nil
	}
	if err := WriteMetadata(sys, l.Dir, moduleID, kind, baseline); err != nil {
		return nil, err
	}
	if kind == KindPatch {
		res.PatchesDir = l.Dir.JoinName(MetaDir).JoinName("patches")
		if err := sys.MkdirAll(res.PatchesDir, 0o755); err != nil {
			return nil, err
		}
	}
	return res, nil
}
