package engine

import (
	"context"

	"github.com/agentpack/agentpack/engine/skillset"
)

// SkillsResult is the skill set of one profile.
type SkillsResult struct {
	Profile string
	// Set holds the skills, each with the exact bytes a deploy writes.
	Set *skillset.Set
	// Warnings are the load's warnings plus the skill set's own (name
	// collisions, skills left out and why).
	Warnings []string
}

// Skills returns the skills that deploying req would write, from the same
// compiled desired state plan uses (local, git and package modules, after
// every transformation a target applies): each with its frontmatter and
// every file's bytes, digest and size. Nothing is written.
func (e *Engine) Skills(ctx context.Context, req Request) (*SkillsResult, error) {
	st, err := e.Load(ctx, req)
	if err != nil {
		return nil, err
	}
	set := skillset.Build(st.Modules, st.Desired, st.Warn)
	return &SkillsResult{Profile: st.Profile, Set: set, Warnings: st.Warnings}, nil
}
