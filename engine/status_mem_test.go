package engine_test

import (
	"context"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestStatusStateIsAnAnswers: status answers with the State a kept answer
// has (warnings, profile, targets; no desired state) whether it computed
// the answer or not, so nothing holds the desired state while the answer
// is kept.
func TestStatusStateIsAnAnswers(t *testing.T) {
	env := testEnv(t)
	req := engine.Request{Repo: codexRepo(t)}
	ctx := context.Background()
	if _, _, err := engine.New(env, targets.NewSet()).Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	st, d, err := engine.New(env, targets.NewSet()).Status(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Desired != nil || st.Profile != d.Profile || len(st.Targets) != len(d.Targets) {
		t.Fatalf("status state: desired %v, profile %q (answer %q), targets %q (answer %q)", st.Desired != nil, st.Profile, d.Profile, st.Targets, d.Targets)
	}
}
