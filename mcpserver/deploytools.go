package mcpserver

import (
	"context"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
)

// scope is what a confirm token issued for c's request is bound to.
func (c *call) scope() confirmScope {
	s := confirmScope{Repo: c.eng.Env.ResolveRepo(c.req.Repo), Profile: c.req.Profile, Target: c.req.Target, Machine: c.req.Machine}
	if s.Profile == "" {
		s.Profile = "default"
	}
	if s.Target == "" {
		s.Target = "all"
	}
	return s
}

// planHash is [plan.Plan.Hash] of a deploy's data, which carries the same
// profile, targets and changes.
func planHash(d *engine.DeployData) string {
	return (&plan.Plan{Profile: d.Profile, Targets: d.Targets, Changes: d.Changes}).Hash()
}

// runDeploy is `deploy` without --apply, plus a confirm token bound to the
// request and the plan's hash.
func runDeploy(ctx context.Context, c *call) *envelope.Envelope {
	env := envelope.New("deploy", "deploy")
	st, d, err := c.eng.Deploy(ctx, c.req, false, engine.ApplyOptions{Command: "deploy"})
	if err != nil {
		return env.Fail(err, warningsOf(st))
	}
	tok := c.srv.tokens.issue(c.scope(), planHash(d))
	return env.Succeed(&confirmedDeploy{DeployData: d, ConfirmToken: tok.value, ConfirmPlanHash: tok.planHash,
		ConfirmTokenExpiresAt: tok.expires.UTC().Format(time.RFC3339)}, st.Warnings)
}

// confirmedDeploy is the data of the deploy tool: the CLI's deploy data
// plus the confirm token deploy_apply needs. Confirm tokens are the
// server's business, so they live here, not in the engine.
type confirmedDeploy struct {
	*engine.DeployData
	ConfirmToken          string `json:"confirm_token"`
	ConfirmPlanHash       string `json:"confirm_plan_hash"`
	ConfirmTokenExpiresAt string `json:"confirm_token_expires_at"`
}

// runDeployApply is `deploy --apply --yes`, gated by a confirm token whose
// plan still matches the disk. The engine takes the cross-process lock and
// re-plans under it. With dry_run it is `deploy --apply --dry-run`: the
// plan, nothing written, no token used.
func runDeployApply(ctx context.Context, c *call) *envelope.Envelope {
	if c.args.DryRun {
		env := envelope.New("deploy", "deploy")
		st, d, err := c.eng.Deploy(ctx, c.req, false, engine.ApplyOptions{Command: "deploy"})
		if err != nil {
			return env.Fail(err, warningsOf(st))
		}
		return env.Succeed(d, st.Warnings)
	}
	env := envelope.New("deploy", "deploy --apply")
	tok, err := c.srv.tokens.claim(c.args.ConfirmToken, c.scope())
	if err != nil {
		return env.Fail(err, nil)
	}
	// The engine re-plans under the cross-process lock and refuses unless
	// that plan is the one this token confirmed.
	st, d, err := c.eng.Deploy(ctx, c.req, true, engine.ApplyOptions{Adopt: c.args.Adopt, Force: c.args.Force,
		Command: "deploy --apply", ExpectPlanHash: tok.planHash})
	if err != nil {
		if apperr.CodeOf(err) != apperr.ConfirmTokenMismatch {
			c.srv.tokens.release(tok) // spent only on success or on a plan that can never match again
		}
		return env.Fail(err, warningsOf(st))
	}
	return env.Succeed(d, st.Warnings)
}
