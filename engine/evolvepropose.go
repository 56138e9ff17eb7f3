package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// EvolvePropose turns hand edits of deployed files into overlay files of
// one scope, committed on a new branch of the desired-state repo (as the
// original agentpack does). The branch is built from git objects alone:
// the checked-out branch, the index and the work tree are left as they
// were, which is where the original ends too (it checks the branch out,
// commits and switches back). A dirty work tree is refused.
func (e *Engine) EvolvePropose(ctx context.Context, req EvolveProposeRequest) (*EvolveProposeData, error) {
	scope, err := parseOverlayScope(req.Scope)
	if err != nil {
		return nil, err
	}
	if req.Branch != "" && !gitsource.ValidBranchName(req.Branch) {
		return nil, apperr.New(apperr.InvalidArgument, "%q is not a valid branch name", req.Branch).
			WithHint("use letters, digits and '/', '-', '_', '.', e.g. evolve/my-edits").With("branch", req.Branch)
	}
	dry := req.DryRun || e.dryRun()
	var out *EvolveProposeData
	err = e.WithLock(ctx, "evolve propose", func(recovered []string) error {
		st, p, err := e.planWith(ctx, req.Request, e.Load, true) // the modules' bytes are needed
		if err != nil {
			return err
		}
		if err := checkModuleID(st, req.ModuleID); err != nil {
			return err
		}
		out = &EvolveProposeData{Scope: string(scope), Files: []string{}, FilesPosix: []string{},
			Candidates: []EvolveItem{}, Skipped: []EvolveSkipped{}}
		props := e.findProposals(st, p, req, scope, out)
		defer func() { out.Warnings = append(recovered, st.Warnings...) }()
		if len(props) == 0 {
			out.Reason = "no_drift"
			if len(out.Skipped) > 0 {
				out.Reason = "no_proposeable_drift"
			}
			return nil
		}
		var wt *gitsource.WorkTree
		if !dry {
			if wt, err = e.cleanWorkTree(st.Repo); err != nil {
				return err
			}
		}
		files, err := e.stageProposals(ctx, st, req, scope, props, out)
		if err != nil {
			return err
		}
		switch {
		case len(files) == 0:
			out.Reason = "no_proposeable_drift"
			return nil
		case dry:
			out.Reason = "dry_run"
			return nil
		}
		return e.commitProposal(wt, req, scope, files, out)
	})
	return out, err
}

// parseOverlayScope checks a --scope value; "" is global.
func parseOverlayScope(s string) (overlay.Scope, error) {
	if s == "" {
		return overlay.Global, nil
	}
	if sc, ok := overlay.ParseScope(s); ok {
		return sc, nil
	}
	return "", apperr.New(apperr.InvalidArgument, "unknown overlay scope %q", s).
		WithHint("use global, machine or project").With("scope", s)
}

// checkModuleID refuses a --module-id the manifest does not have.
func checkModuleID(st *State, id string) error {
	if id == "" {
		return nil
	}
	_, err := findModule(st.Manifest, id)
	return err
}

// cleanWorkTree opens the git work tree of repo, refusing a repo outside
// git (E_GIT_REPO_REQUIRED) and one with uncommitted changes
// (E_GIT_WORKTREE_DIRTY).
func (e *Engine) cleanWorkTree(repo string) (*gitsource.WorkTree, error) {
	r := abs(repo)
	wt, ok, err := gitsource.OpenWorkTree(r)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.IOFailed, "cannot open the git repository of %s", repo).With("repo", repo)
	}
	if !ok {
		hint := "turn the desired-state repo into a git repository (git init, then commit it) and retry"
		return nil, apperr.New(apperr.GitRepoRequired, "evolve propose needs the desired-state repo %s to be a git repository", repo).
			WithHint("%s", hint).With("command", "evolve propose").With("repo", repo).With("repo_posix", r.ToSlash()).
			With("hint", hint).With("reason_code", "git_repo_required").With("next_actions", []string{"init_git_repo", "retry_command"})
	}
	changes, err := wt.Changes()
	if err != nil {
		return nil, apperr.Wrap(err, apperr.IOFailed, "cannot read the git status of %s", wt.Top).With("repo", repo)
	}
	if len(changes) > 0 {
		hint := "commit or stash the changes of the desired-state repo, then retry"
		return nil, apperr.New(apperr.GitWorktreeDirty, "the desired-state repo %s has %d uncommitted change(s); evolve propose needs a clean work tree", repo, len(changes)).
			WithHint("%s", hint).With("command", "evolve propose").With("repo", repo).With("repo_posix", r.ToSlash()).
			With("hint", hint).With("reason_code", "git_worktree_dirty").With("next_actions", []string{"commit_or_stash", "retry_command"}).
			With("paths", sample(changes))
	}
	return wt, nil
}

// stageProposals writes the proposals into their overlays on a System
// that only records — each new overlay gets its metadata and baseline, as
// `overlay edit --sparse` makes them — and returns the files written, by
// absolute path. The disk is not touched.
func (e *Engine) stageProposals(ctx context.Context, st *State, req EvolveProposeRequest, scope overlay.Scope, props []proposal, out *EvolveProposeData) (map[fsys.AbsPath]gitsource.BlobFile, error) {
	staged := fsys.NewDryRunSystem(e.Sys)
	byModule := map[string][]proposal{}
	var ids []string
	for _, pr := range props {
		if byModule[pr.item.ModuleID] == nil {
			ids = append(ids, pr.item.ModuleID)
		}
		byModule[pr.item.ModuleID] = append(byModule[pr.item.ModuleID], pr)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t, err := e.openOverlay(ctx, OverlayRequest{Request: req.Request, ModuleID: id, Scope: string(scope)}, true)
		if err != nil {
			return nil, err
		}
		meta, err := overlay.ReadMeta(e.Sys, t.layer.Dir)
		if err != nil {
			return nil, err
		}
		if meta.Kind == overlay.KindPatch {
			for _, pr := range byModule[id] {
				out.unpropose(pr.item, evolvePatchKind)
			}
			continue
		}
		b, warnings, err := e.baselineOf(ctx, t)
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			st.Warn("%s", w)
		}
		if _, err := overlay.Edit(staged, abs(st.Repo), id, t.layer, overlay.KindDir, overlay.FillSparse, t.upstream, b); err != nil {
			return nil, err
		}
		for _, pr := range byModule[id] {
			p := t.layer.Dir.Join(fsys.RelPath(pr.item.File))
			if err := staged.MkdirAll(p.Dir(), 0o755); err != nil {
				return nil, err
			}
			if err := staged.WriteFile(p, pr.data, pr.mode|0o600); err != nil {
				return nil, err
			}
		}
	}
	files := map[fsys.AbsPath]gitsource.BlobFile{}
	for _, op := range staged.Ops() {
		if op.Kind == fsys.OpWrite {
			files[op.Path] = gitsource.BlobFile{Data: op.Data, Executable: gitsource.IsExecutable(op.Perm)}
		}
	}
	for p := range files {
		rel, err := filepath.Rel(st.Repo, p.String())
		if err != nil {
			return nil, err
		}
		out.Files = append(out.Files, rel)
	}
	sort.Strings(out.Files)
	for _, f := range out.Files {
		out.FilesPosix = append(out.FilesPosix, filepath.ToSlash(f))
	}
	return files, nil
}

// unpropose turns a candidate back into a skipped file.
func (out *EvolveProposeData) unpropose(it EvolveItem, reason string) {
	for i, c := range out.Candidates {
		if c == it {
			out.Candidates = append(out.Candidates[:i], out.Candidates[i+1:]...)
			break
		}
	}
	out.Summary.DriftedProposeable--
	out.Summary.DriftedSkipped++
	out.Skipped = append(out.Skipped, EvolveSkipped{Target: it.Target, Path: it.Path, PathPosix: it.PathPosix, Reason: reason,
		ReasonCode: reason, ReasonMessage: evolveMessages[reason], NextActions: []string{}, ModuleID: it.ModuleID})
}

// commitProposal commits files on the proposal's new branch.
func (e *Engine) commitProposal(wt *gitsource.WorkTree, req EvolveProposeRequest, scope overlay.Scope, files map[fsys.AbsPath]gitsource.BlobFile, out *EvolveProposeData) error {
	now := time.Now()
	branch := req.Branch
	if branch == "" {
		branch = defaultProposeBranch(scope, req.ModuleID, out.Candidates, now)
	}
	if wt.HasBranch(branch) {
		return apperr.New(apperr.InvalidArgument, "branch %q already exists in the desired-state repo", branch).
			WithHint("pass another --branch, or delete the old proposal branch").With("branch", branch)
	}
	blobs := map[string]gitsource.BlobFile{}
	for p, f := range files {
		rel, err := wt.Top.Rel(p)
		if err != nil || strings.HasPrefix(rel.String(), "..") {
			return apperr.New(apperr.IOInvalidPath, "%s is outside the git work tree %s", p, wt.Top).With("path", p.String())
		}
		blobs[filepath.ToSlash(rel.String())] = f
	}
	id, err := wt.CommitBranch(branch, "chore(evolve): propose overlay updates\n", blobs, now)
	if err != nil {
		return apperr.Wrap(err, apperr.IOFailed, "cannot commit the proposal on branch %s", branch).With("branch", branch)
	}
	out.Created, out.Committed, out.Branch, out.Commit = true, true, branch, id
	return nil
}

// defaultProposeBranch is the original's evolve/propose-<scope>-<module>-<time>.
func defaultProposeBranch(scope overlay.Scope, filter string, items []EvolveItem, now time.Time) string {
	mod := filter
	if mod == "" {
		mod = "multi"
		if len(items) > 0 && items[0].ModuleID == items[len(items)-1].ModuleID {
			mod = items[0].ModuleID
		}
	}
	safe := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return r
		}
		return '_'
	}, mod)
	u := now.UTC()
	return fmt.Sprintf("evolve/propose-%s-%s-%s-%09d", scope, safe, u.Format("20060102T150405Z"), u.Nanosecond())
}
