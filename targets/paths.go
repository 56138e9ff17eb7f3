package targets

import (
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine/target"
)

// resolvePath turns a path option into an absolute path: a leading ~ is the
// home folder, an absolute path stays, a relative one is taken from base.
func resolvePath(rc *target.RenderContext, base, p string) string {
	p = rc.ExpandHome(strings.TrimSpace(p))
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, filepath.FromSlash(p))
}

// codexHome is the codex_home option if set, else $CODEX_HOME, else ~/.codex.
func codexHome(rc *target.RenderContext) string {
	if h := rc.Config.OptionString("codex_home", ""); h != "" {
		return resolvePath(rc, rc.Home, h)
	}
	if strings.TrimSpace(rc.CodexHome) != "" {
		return resolvePath(rc, rc.Home, rc.CodexHome)
	}
	return filepath.Join(rc.Home, ".codex")
}

// claudeHome is the claude_home option if set, else ~/.claude.
func claudeHome(rc *target.RenderContext) string {
	return resolvePath(rc, rc.Home, rc.Config.OptionString("claude_home", "~/.claude"))
}
