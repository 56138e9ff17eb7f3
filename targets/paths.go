package targets

import (
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

// resolvePath turns a path option into an absolute path: a leading ~ is the
// home folder, an absolute path stays, a relative one is taken from base.
func resolvePath(rc *target.RenderContext, base fsys.AbsPath, p string) fsys.AbsPath {
	p = rc.ExpandHome(strings.TrimSpace(p))
	if filepath.IsAbs(p) {
		return fsys.AbsPath(filepath.Clean(p))
	}
	return under(base, p)
}

// under is the path rel names below dir. rel is '/'-separated and comes
// from an option or a module (a file path, a name); an option may climb out
// of dir with "..", which is the user's choice to make.
func under(dir fsys.AbsPath, rel string) fsys.AbsPath {
	return fsys.AbsPath(filepath.Join(dir.String(), filepath.FromSlash(rel)))
}

// codexHome is the codex_home option if set, else $CODEX_HOME, else ~/.codex.
func codexHome(rc *target.RenderContext) fsys.AbsPath {
	if h := rc.Config.OptionString("codex_home", ""); h != "" {
		return resolvePath(rc, rc.Home, h)
	}
	if strings.TrimSpace(rc.CodexHome) != "" {
		return resolvePath(rc, rc.Home, rc.CodexHome)
	}
	return rc.Home.JoinName(".codex")
}

// claudeHome is the claude_home option if set, else ~/.claude.
func claudeHome(rc *target.RenderContext) fsys.AbsPath {
	return resolvePath(rc, rc.Home, rc.Config.OptionString("claude_home", "~/.claude"))
}
