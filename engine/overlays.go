package engine

import (
	"strings"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/internal/fsys"
)

// MachineID is the machine whose overlays apply: --machine, else
// $AGENTPACK_MACHINE_ID, else the host name, normalised ("unknown" when
// none gives a usable name).
func (e *Engine) MachineID(req Request) string {
	for _, s := range []string{req.Machine, e.Env.MachineID} {
		if id := overlay.NormalizeMachineID(s); id != "" {
			return id
		}
	}
	return "unknown"
}

// ProjectID identifies the working project for project overlays: a hash
// of its git origin URL, or of its folder when it has no origin.
func (e *Engine) ProjectID() string {
	root := e.projectRoot()
	if origin := e.originURL(root); origin != "" {
		return overlay.ProjectID(origin, root)
	}
	// The original hashes the canonical path, so a project reached through
	// a symlinked folder keeps its id.
	if real, err := fsys.EvalSymlinks(e.Sys, root); err == nil {
		root = real
	}
	return overlay.ProjectID("", root)
}

// originURL reads remote "origin"'s url from the project's .git/config
// (following a worktree's or submodule's .git file); "" when there is none.
func (e *Engine) originURL(root fsys.AbsPath) string {
	gitDir := root.JoinName(".git")
	if fi, err := e.Sys.Lstat(gitDir); err == nil && fi.Mode().IsRegular() {
		data, err := e.Sys.ReadFile(gitDir)
		if err != nil {
			return ""
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return ""
		}
		target = strings.TrimSpace(target)
		if !strings.HasPrefix(target, "/") {
			target = root.String() + "/" + target
		}
		gitDir = abs(target)
		if common, err := e.Sys.ReadFile(gitDir.JoinName("commondir")); err == nil {
			c := strings.TrimSpace(string(common))
			if !strings.HasPrefix(c, "/") {
				c = gitDir.String() + "/" + c
			}
			gitDir = abs(c)
		}
	}
	data, err := e.Sys.ReadFile(gitDir.JoinName("config"))
	if err != nil {
		return ""
	}
	return gitsource.RemoteURL(data, "origin")
}

// overlayLayout locates the overlays of a repo for the request's machine
// and the working project.
func (e *Engine) overlayLayout(repo string, req Request) overlay.Layout {
	return overlay.Layout{Repo: abs(repo), MachineID: e.MachineID(req), ProjectID: e.ProjectID()}
}

// findOverlays notes which overlay scopes st's repo has at all, so a repo
// without overlays costs three Lstats, not three per module.
func (e *Engine) findOverlays(st *State) {
	st.overlays = e.overlayLayout(st.Repo, st.Req)
	st.overlayScopes = nil
	for _, sc := range overlay.Scopes {
		if st.overlays.HasScope(e.Sys, sc) {
			st.overlayScopes = append(st.overlayScopes, sc)
		}
	}
}

// overlayLayers are the overlay folders of moduleID, lowest first.
func (e *Engine) overlayLayers(st *State, moduleID string) []overlay.Layer {
	layers := make([]overlay.Layer, 0, len(st.overlayScopes))
	for _, sc := range st.overlayScopes {
		layers = append(layers, overlay.Layer{Scope: sc, Dir: st.overlays.Dir(e.Sys, sc, moduleID)})
	}
	return layers
}

// composeOverlays applies a module's overlays to its upstream files.
func (e *Engine) composeOverlays(st *State, mod *module.Module, files []module.File) ([]module.File, map[string]string, error) {
	c, err := overlay.Compose(e.Sys, abs(st.Repo), mod.ID, files, e.overlayLayers(st, mod.ID))
	if err != nil {
		return nil, nil, err
	}
	for _, w := range c.Warnings {
		st.Warn("%s", w)
	}
	var origins map[string]string
	if len(c.Origins) > 0 {
		origins = make(map[string]string, len(c.Origins))
		for p, sc := range c.Origins {
			origins[p] = string(sc)
		}
	}
	return c.Files, origins, nil
}
