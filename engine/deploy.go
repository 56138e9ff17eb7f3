package engine

import (
	"context"
	"fmt"

	"github.com/agentpack/agentpack/engine/apply"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// ApplyOptions are the flags of `deploy --apply`.
type ApplyOptions struct {
	Adopt bool
	Force bool
	// Command names the holder in the lock file and the snapshot record.
	Command string
	// ExpectPlanHash, when set, refuses the apply unless the plan made under
	// the lock still has this [plan.Plan.Hash] (E_CONFIRM_TOKEN_MISMATCH): what
	// was confirmed is exactly what is applied.
	ExpectPlanHash string
}

// DeployData is the data of `agentpack deploy`.
type DeployData struct {
	Profile    string        `json:"profile"`
	Targets    []string      `json:"targets"`
	Changes    []plan.Change `json:"changes"`
	Summary    plan.Summary  `json:"summary"`
	Applied    bool          `json:"applied"`
	SnapshotID string        `json:"snapshot_id,omitempty"`
	Reason     string        `json:"reason,omitempty"`
}

func deployData(p *plan.Plan) *DeployData {
	return &DeployData{Profile: p.Profile, Targets: p.Targets, Changes: p.Changes, Summary: p.Summary}
}

// Deploy plans and, when apply is set, applies the plan as one transaction.
func (e *Engine) Deploy(ctx context.Context, req Request, doApply bool, opt ApplyOptions) (*State, *DeployData, error) {
	if !doApply {
		// Only shown: the plan's kept answer, shared with `plan`, serves
		// while nothing it read changed.
		st, p, err := e.PlanView(ctx, req)
		if err != nil {
			return st, nil, err
		}
		return st, deployData(p), nil
	}
	// A current kept plan with nothing to do needs neither the lock nor a
	// plan; one confirmed by its hash is answered so only when it is the
	// plan confirmed (else the plan under the lock tells the mismatch).
	if st, p, ok := e.keptInSync(req); ok && (opt.ExpectPlanHash == "" || opt.ExpectPlanHash == p.Hash()) {
		out := deployData(p)
		out.Reason = "no_changes"
		return st, out, nil
	}
	var st *State
	var out *DeployData
	if opt.Command == "" {
		opt.Command = "deploy --apply"
	}
	ctx = withCheckouts(ctx)
	e.prefetchPinned(ctx, req) // pinned commits the cache lacks are fetched outside the state lock
	err := e.WithLock(ctx, opt.Command, func(recovered []string) error {
		var err error
		st, out, err = e.applyLocked(ctx, req, opt, recovered)
		return err
	})
	return st, out, err
}

// applyLocked is deploy --apply for a caller that holds the state lock.
func (e *Engine) applyLocked(ctx context.Context, req Request, opt ApplyOptions, recovered []string) (*State, *DeployData, error) {
	var out *DeployData
	st, err := func() (*State, error) {
		st, p, err := e.planKeepingInSync(ctx, req)
		if st != nil {
			st.Warnings = append(recovered, st.Warnings...)
		}
		if err != nil {
			return st, err
		}
		out = deployData(p)
		if opt.ExpectPlanHash != "" {
			if h := p.Hash(); h != opt.ExpectPlanHash {
				return st, apperr.New(apperr.ConfirmTokenMismatch, "the plan changed since it was confirmed").
					WithHint("call deploy again, review the new plan, and confirm that one").
					With("confirm_plan_hash", opt.ExpectPlanHash).With("current_plan_hash", h).
					With("next_actions", []string{"call_deploy"})
			}
		}
		if err := CheckRefusals(p, opt); err != nil {
			return st, err
		}
		d := e.deployment(st, p, opt.Command)
		// Apply needs the desired state only to build its writes, and no
		// caller of a deploy reads it after: let go of it, so its files
		// can be freed while the target files are written.
		st.Desired = nil
		id, applied, err := e.writer().Apply(d)
		if err != nil {
			return st, err
		}
		out.Applied, out.SnapshotID = applied, id
		if !applied {
			out.Reason = "no_changes"
		}
		return st, nil
	}()
	return st, out, err
}

// CheckRefusals is the refusal deploy --apply would give p with opt
// (E_ADOPT_CONFIRM_REQUIRED, E_DRIFT_CONFLICT), so a caller can say so before
// asking anything.
func CheckRefusals(p *plan.Plan, opt ApplyOptions) error {
	var adopt, drift []string
	for _, c := range p.Changes {
		if len(c.Entries) > 0 {
			// A key-level file: each entry is judged on its own, so one
			// flag never lets the other kind of overwrite through.
			for _, e := range c.Entries {
				switch {
				case e.UpdateKind == plan.UpdateAdopt:
					adopt = append(adopt, c.Path.String()+"#"+e.Name)
				case e.UpdateKind == plan.UpdateDrifted, e.Op == plan.OpDelete && e.Reason == plan.ReasonEdited:
					drift = append(drift, c.Path.String()+"#"+e.Name)
				}
			}
			continue
		}
		switch {
		case c.UpdateKind == plan.UpdateAdopt:
			adopt = append(adopt, c.Path.String())
		case c.UpdateKind == plan.UpdateDrifted, c.Op == plan.OpDelete && c.Reason == plan.ReasonEdited:
			drift = append(drift, c.Path.String())
		}
	}
	if len(adopt) > 0 && !opt.Adopt {
		hint := "re-run with --adopt to take them over (their current bytes are saved in the snapshot; `rollback --last` brings them back)"
		if len(drift) > 0 && !opt.Force {
			// Say both at once rather than refusing twice in a row.
			hint = fmt.Sprintf("re-run with --adopt --force: --adopt takes them over, --force also overwrites %d managed file(s) edited by hand (all their bytes are saved in the snapshot)", len(drift))
		}
		return apperr.New(apperr.AdoptConfirmRequired, "%d file(s) exist but are not managed by agentpack; refusing to overwrite them", len(adopt)).
			WithHint("%s", hint).
			With("paths", adopt).With("sample_paths", sample(adopt)).With("flag", "--adopt").With("drifted_paths", drift).
			With("reason_code", "adopt_confirm_required").With("next_actions", []string{"retry_with_adopt"})
	}
	if len(drift) > 0 && !opt.Force {
		return apperr.New(apperr.DriftConflict, "%d managed file(s) were edited since the last deploy; refusing to overwrite them", len(drift)).
			WithHint("review with `agentpack diff`, then re-run with --force (the edited bytes are saved in the snapshot)").
			With("paths", drift).With("sample_paths", sample(drift)).With("flag", "--force").
			With("reason_code", "drift_conflict").With("next_actions", []string{"review_diff", "retry_with_force"})
	}
	return nil
}

func sample(paths []string) []string {
	if len(paths) > 5 {
		return paths[:5]
	}
	return paths
}

// DryRun runs p's transaction against a recording System and returns what
// an apply would write, in order, without touching the disk or the store.
func (e *Engine) DryRun(ctx context.Context, st *State, p *plan.Plan) ([]fsys.Op, error) {
	return e.writer().DryRun(e.deployment(st, p, ""))
}

// deployment is what applying p, a plan of st, carries out.
func (e *Engine) deployment(st *State, p *plan.Plan, command string) apply.Deployment {
	return apply.Deployment{Desired: st.Desired, Plan: p, Command: command, Repo: st.Repo, Project: e.projectRoot().String(),
		Profile: st.Profile, Targets: st.Targets, Machine: st.Req.Machine,
		State: []apply.StateFile{e.rootsAfter(st, liveRoots(st, p), st.Desired.Stale)}}
}
