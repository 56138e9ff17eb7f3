package engine

import (
	"context"

	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/internal/apperr"
)

// OverlayEditRequest is `overlay edit`.
type OverlayEditRequest struct {
	OverlayRequest
	// Kind is dir (default) or patch.
	Kind string
	// Sparse creates only metadata; Materialize copies the upstream files
	// the overlay lacks.
	Sparse, Materialize bool
}

// OverlayEditData is the data of `overlay edit`.
type OverlayEditData struct {
	OverlayPathData
	OverlayKind  string   `json:"overlay_kind"`
	Created      bool     `json:"created"`
	Sparse       bool     `json:"sparse"`
	Materialized bool     `json:"materialized"`
	Copied       []string `json:"copied"`
	PatchesDir   string   `json:"patches_dir,omitempty"`
	Project      bool     `json:"project"`
	Warnings     []string `json:"-"`
}

// OverlayEdit creates or completes a module's overlay in a scope.
func (e *Engine) OverlayEdit(ctx context.Context, req OverlayEditRequest) (*OverlayEditData, error) {
	kind := overlay.KindDir
	switch req.Kind {
	case "", "dir":
	case "patch":
		kind = overlay.KindPatch
	default:
		return nil, apperr.New(apperr.InvalidArgument, "unknown overlay kind %q", req.Kind).WithHint("use dir or patch")
	}
	if req.Sparse && req.Materialize {
		return nil, apperr.New(apperr.InvalidArgument, "--sparse and --materialize contradict each other").
			WithHint("--sparse copies no upstream file, --materialize copies the missing ones: pick one")
	}
	if kind == overlay.KindPatch && req.Materialize {
		return nil, apperr.New(apperr.InvalidArgument, "a patch overlay cannot be materialized").
			WithHint("drop --materialize: patch overlays hold patches, not copies of upstream files")
	}
	fill := overlay.FillAll
	switch {
	case req.Sparse || kind == overlay.KindPatch:
		fill = overlay.FillSparse
	case req.Materialize:
		fill = overlay.FillMissing
	}
	var out *OverlayEditData
	err := e.WithLock(ctx, "overlay edit", func([]string) error {
		t, err := e.openOverlay(ctx, req.OverlayRequest, true)
		if err != nil {
			return err
		}
		b, warnings, err := e.baselineOf(ctx, t)
		if err != nil {
			return err
		}
		res, err := overlay.Edit(e.Sys, abs(t.st.Repo), t.mod.ID, t.layer, kind, fill, t.upstream, b)
		if err != nil {
			return err
		}
		out = &OverlayEditData{OverlayPathData: t.pathData(e), OverlayKind: string(kind), Created: res.Created,
			Sparse: req.Sparse, Materialized: res.Materialized, Copied: res.Copied, Project: t.layer.Scope == overlay.Project,
			Warnings: warnings}
		out.Exists = true
		if out.Copied == nil {
			out.Copied = []string{}
		}
		if res.PatchesDir != "" {
			out.PatchesDir = res.PatchesDir.String()
		}
		return nil
	})
	return out, err
}

// OverlayRebaseRequest is `overlay rebase`.
type OverlayRebaseRequest struct {
	OverlayRequest
	Sparsify bool
}

// OverlayRebaseData is the data of `overlay rebase`.
type OverlayRebaseData struct {
	OverlayPathData
	DryRun   bool            `json:"dry_run"`
	Sparsify bool            `json:"sparsify"`
	Report   *overlay.Report `json:"report"`
}

// OverlayRebase carries an overlay's edits onto the module's current
// upstream (see [overlay.Rebase]). On conflicts the data is returned with
// the E_OVERLAY_REBASE_CONFLICT error.
func (e *Engine) OverlayRebase(ctx context.Context, req OverlayRebaseRequest) (*OverlayRebaseData, error) {
	var out *OverlayRebaseData
	err := e.WithLock(ctx, "overlay rebase", func([]string) error {
		t, err := e.openOverlay(ctx, req.OverlayRequest, true)
		if err != nil {
			return err
		}
		repo := abs(t.st.Repo)
		b, err := overlay.Open(e.Sys, repo, t.mod.ID, t.layer)
		if err != nil {
			return err
		}
		base, err := e.mergeBase(ctx, t, b)
		if err != nil {
			return err
		}
		nb, _, err := e.baselineOf(ctx, t)
		if err != nil {
			return err
		}
		in := overlay.RebaseInput{ModuleID: t.mod.ID, Layer: t.layer, Baseline: b, Base: base,
			Upstream: t.upstream, NewBaseline: nb}
		rep, err := overlay.Rebase(e.Sys, in, overlay.RebaseOptions{DryRun: e.dryRun(), Sparsify: req.Sparsify})
		if rep != nil {
			out = &OverlayRebaseData{OverlayPathData: t.pathData(e), DryRun: e.dryRun(), Sparsify: req.Sparsify, Report: rep.Normalized()}
		}
		return err
	})
	return out, err
}
