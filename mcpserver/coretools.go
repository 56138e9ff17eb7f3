package mcpserver

import (
	"context"

	"github.com/agentpack/agentpack/engine"
)

// Each handler is a thin call of the engine function the CLI command uses,
// returning the envelope the command prints under --json.

func runPlan(_ context.Context, c *call) *engine.Envelope {
	env := engine.NewEnvelope("plan", "plan")
	st, p, err := c.eng.Plan(c.req)
	if err != nil {
		return env.Fail(err, warningsOf(st))
	}
	return env.Succeed(p, st.Warnings)
}

func runDiff(_ context.Context, c *call) *engine.Envelope {
	env := engine.NewEnvelope("diff", "diff")
	st, d, err := c.eng.Diff(c.req)
	if err != nil {
		return env.Fail(err, warningsOf(st))
	}
	return env.Succeed(d, st.Warnings)
}

func runPreview(_ context.Context, c *call) *engine.Envelope {
	env := engine.NewEnvelope("preview", "preview")
	st, d, err := c.eng.Preview(c.req, c.args.Diff)
	if err != nil {
		return env.Fail(err, warningsOf(st))
	}
	return env.Succeed(d, st.Warnings)
}

func runStatus(_ context.Context, c *call) *engine.Envelope {
	env := engine.NewEnvelope("status", "status")
	st, d, err := c.eng.Status(c.req, c.args.Only)
	if err != nil {
		return env.Fail(err, warningsOf(st))
	}
	return env.Succeed(d, st.Warnings)
}

func runDoctor(_ context.Context, c *call) *engine.Envelope {
	env := engine.NewEnvelope("doctor", "doctor")
	d, warnings, err := c.eng.Doctor(c.req, false)
	if err != nil {
		return env.Fail(err, warnings)
	}
	return env.Succeed(d, warnings)
}

func runExplain(_ context.Context, c *call) *engine.Envelope {
	env := engine.NewEnvelope("explain", "explain "+c.args.Kind)
	st, d, err := c.eng.Explain(c.req, c.args.Kind)
	if err != nil {
		return env.Fail(err, warningsOf(st))
	}
	return env.Succeed(d, st.Warnings)
}

func runSnapshots(_ context.Context, c *call) *engine.Envelope {
	if c.args.ID != "" {
		env := engine.NewEnvelope("snapshots", "snapshots show")
		d, err := c.eng.Snapshot(c.args.ID)
		if err != nil {
			return env.Fail(err, nil)
		}
		return env.Succeed(map[string]any{"snapshot": d}, nil)
	}
	env := engine.NewEnvelope("snapshots", "snapshots list")
	list, warnings, err := c.eng.Snapshots()
	if err != nil {
		return env.Fail(err, warnings)
	}
	return env.Succeed(map[string]any{"snapshots": list}, warnings)
}

// runRollback takes the cross-process lock inside [engine.Engine.Rollback],
// like the CLI. Snapshots live under $AGENTPACK_HOME, so repo is accepted
// for symmetry and not needed.
func runRollback(_ context.Context, c *call) *engine.Envelope {
	env := engine.NewEnvelope("rollback", "rollback")
	d, warnings, err := c.eng.Rollback(engine.RollbackOptions{To: c.args.To, Last: c.args.Last, Target: c.req.Target})
	if err != nil {
		return env.Fail(err, warnings)
	}
	return env.Succeed(d, warnings)
}
