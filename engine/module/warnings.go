package module

import "fmt"

// Warnings are the non-fatal findings about lm's files: a skill whose
// SKILL.md `name` differs from the folder it deploys to (its id's name),
// which agents that expect the two to match may skip or list under the
// other name.
func (lm *LoadedModule) Warnings() []string {
	if lm.Type != TypeSkill || lm.Frontmatter == nil {
		return nil
	}
	if name := lm.Frontmatter.String("name"); name != "" && name != lm.Name() {
		return []string{fmt.Sprintf("module %s: SKILL.md has `name: %s` but the skill deploys to the folder %q; "+
			"make the two match (change `name` or the module id)", lm.ID, name, lm.Name())}
	}
	return nil
}
