package mcpserver

import (
	"context"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/envelope"
)

// Each handler is a thin call of the engine function the CLI command uses,
// returning the envelope the command prints under --json.

func runPlan(ctx context.Context, c *call) *envelope.Envelope {
	st, p, err := c.eng.Plan(ctx, c.req)
	if w, ok := noRepoWarning(c.req, err); ok {
		p = &plan.Plan{Profile: profileOf(c.req), Targets: []string{}, Changes: []plan.Change{}}
		return envelope.New("plan", "plan").Succeed(p, []string{w})
	}
	return finish(envelope.New("plan", "plan"), p, warningsOf(st), err)
}

func runDiff(ctx context.Context, c *call) *envelope.Envelope {
	st, d, err := c.eng.Diff(ctx, c.req)
	return finish(envelope.New("diff", "diff"), d, warningsOf(st), err)
}

func runPreview(ctx context.Context, c *call) *envelope.Envelope {
	st, d, err := c.eng.Preview(ctx, c.req, c.args.Diff)
	return finish(envelope.New("preview", "preview"), d, warningsOf(st), err)
}

func runStatus(ctx context.Context, c *call) *envelope.Envelope {
	st, d, err := c.eng.Status(ctx, c.req, c.args.Only)
	if w, ok := noRepoWarning(c.req, err); ok {
		d = &engine.StatusData{Profile: profileOf(c.req), Targets: []string{}, Drift: []engine.DriftItem{},
			SummaryByRoot: []engine.RootSummary{}, NextActions: []string{}, NextActionsDetailed: []engine.NextAction{}}
		return envelope.New("status", "status").Succeed(d, []string{w})
	}
	return finish(envelope.New("status", "status"), d, warningsOf(st), err)
}

// profileOf is the profile req names, as the engine defaults it.
func profileOf(req engine.Request) string {
	if req.Profile == "" {
		return "default"
	}
	return req.Profile
}

func runDoctor(ctx context.Context, c *call) *envelope.Envelope {
	d, warnings, err := c.eng.Doctor(ctx, c.req, false)
	return finish(envelope.New("doctor", "doctor"), d, warnings, err)
}

func runExplain(ctx context.Context, c *call) *envelope.Envelope {
	st, d, err := c.eng.Explain(ctx, c.req, c.args.Kind)
	return finish(envelope.New("explain", "explain "+c.args.Kind), d, warningsOf(st), err)
}

func runSnapshots(ctx context.Context, c *call) *envelope.Envelope {
	if c.args.ID != "" {
		env := envelope.New("snapshots", "snapshots show")
		d, err := c.eng.Snapshot(ctx, c.args.ID)
		if err != nil {
			return env.Fail(err, nil)
		}
		return env.Succeed(map[string]any{"snapshot": d}, nil)
	}
	env := envelope.New("snapshots", "snapshots list")
	list, warnings, err := c.eng.Snapshots(ctx)
	if err != nil {
		return env.Fail(err, warnings)
	}
	return env.Succeed(map[string]any{"snapshots": list}, warnings)
}

// runRollback takes the cross-process lock inside [engine.Engine.Rollback],
// like the CLI. Snapshots live under $AGENTPACK_HOME, so repo is accepted
// for symmetry and not needed.
func runRollback(ctx context.Context, c *call) *envelope.Envelope {
	d, warnings, err := c.eng.Rollback(ctx, engine.RollbackOptions{To: c.args.To, Last: c.args.Last, Target: c.req.Target})
	return finish(envelope.New("rollback", "rollback"), d, warnings, err)
}
