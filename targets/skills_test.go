package targets

import (
	"testing"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
)

// Every adapter only copies a skill's files, verbatim, each naming its
// source and how the load used its bytes (target.DesiredFile.SrcUse): the
// source cache rehashes those copies after an edit of a skill's files
// instead of compiling again, which holds only while nothing else is made
// from them.
func TestSkillFilesAreOnlyCopied(t *testing.T) {
	for _, c := range []struct {
		target string
		scope  target.Scope
	}{
		{"codex", target.ScopeBoth},
		{"claude_code", target.ScopeBoth},
		{"cursor", target.ScopeProject},
		{"vscode", target.ScopeProject},
	} {
		t.Run(c.target, func(t *testing.T) {
			e := newTestEnv(t)
			lm := e.modules["skill:review"]
			bySrc := map[string]*module.File{}
			for i := range lm.Files {
				f := &lm.Files[i]
				if f != lm.Main {
					f.Use = module.UseHashed // as a load that only hashes them marks them
				}
				bySrc[f.Src.String()] = f
			}
			if lm.Main.Use != module.UseSkillMain {
				t.Fatalf("a skill's SKILL.md loaded with use %v, want UseSkillMain", lm.Main.Use)
			}
			out, _ := e.render(t, c.target, c.scope, nil, "skill:review")
			copies := 0
			for _, f := range out.Files {
				src := bySrc[f.Src.String()]
				switch {
				case f.Src == "" || src == nil:
					t.Errorf("%s made %s from the skill, not a copy of one of its files", c.target, f.Path)
				case string(f.Data) != string(src.Data) || f.SrcSHA256 != src.SHA256 || f.SrcUse != src.Use || f.Keyed != nil:
					t.Errorf("%s's %s is not a verbatim copy of %s marked with its use (%v, want %v)", c.target, f.Path, f.Src, f.SrcUse, src.Use)
				default:
					copies++
				}
			}
			if copies < len(lm.Files) {
				t.Errorf("%s copied %d files of the skill's %d", c.target, copies, len(lm.Files))
			}
		})
	}
}
