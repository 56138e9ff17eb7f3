package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Check statuses.
const (
	CheckPass = "pass"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// DoctorCheck is one health check.
type DoctorCheck struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion"`
}

// DoctorData is the data of `agentpack doctor`.
type DoctorData struct {
	Healthy bool           `json:"healthy"`
	Checks  []DoctorCheck  `json:"checks"`
	Summary map[string]int `json:"summary"`
	Fixed   []string       `json:"fixed,omitempty"`
	// MCPServers is what `doctor --mcp` found per client and server.
	MCPServers []MCPServerCheck `json:"mcp_servers,omitempty"`
}

// ManifestIgnoreLine is the .gitignore line that keeps target manifests out
// of the user's project history.
const ManifestIgnoreLine = ".agentpack.manifest*.json"

// Doctor checks that agentpack can work here; with fix it repairs what it
// safely can (an interrupted apply, missing .gitignore lines).
func (e *Engine) Doctor(ctx context.Context, req Request, fix bool) (*DoctorData, []string, error) {
	d := &DoctorData{Checks: []DoctorCheck{}, Summary: map[string]int{CheckPass: 0, CheckWarn: 0, CheckFail: 0}}
	var warnings []string
	add := func(name, status, msg, suggestion string) {
		d.Checks = append(d.Checks, DoctorCheck{Name: name, Status: status, Message: msg, Suggestion: suggestion})
	}
	run := func() error {
		e.checkJournal(add, fix, d)
		st, err := e.Load(ctx, req)
		if err != nil {
			ae := apperr.As(err)
			add("manifest", CheckFail, fmt.Sprintf("[%s] %s", ae.Code, ae.Message), ae.Hint)
			return nil
		}
		warnings = st.Warnings
		add("manifest", CheckPass, fmt.Sprintf("%s parses; %d module(s) selected by profile %s", st.Manifest.Path, len(st.Modules), st.Profile), "")
		e.checkLockfile(add, st)
		for _, r := range st.Desired.Roots {
			e.checkRoot(add, r)
		}
		e.checkIgnored(add, st, fix, d)
		return nil
	}
	cacheChecks := e.checkGitCache(ctx, req, fix, d)
	var err error
	if fix {
		e.recoverBestEffort = true
		err = e.WithLock(ctx, "doctor --fix", func(recovered []string) error {
			d.Fixed = append(d.Fixed, recovered...)
			return run()
		})
		e.recoverBestEffort = false
	} else {
		e.inspectOnly = true
		err = run()
		e.inspectOnly = false
	}
	if err != nil {
		return nil, warnings, err
	}
	d.Checks = append(d.Checks, cacheChecks...)
	for _, c := range d.Checks {
		d.Summary[c.Status]++
	}
	d.Healthy = d.Summary[CheckFail] == 0
	return d, warnings, nil
}

func (e *Engine) checkJournal(add func(name, status, msg, suggestion string), fix bool, d *DoctorData) {
	j, err := e.Store().ReadJournal()
	switch {
	case err != nil:
		add("journal", CheckFail, err.Error(), apperr.As(err).Hint)
	case j != nil:
		add("journal", CheckFail, fmt.Sprintf("an interrupted %q (pid %d) left a journal", j.Command, j.PID), "run `agentpack doctor --fix` (or any deploy) to roll it back")
	default:
		add("journal", CheckPass, "no interrupted apply", "")
	}
	store := e.Store()
	left, err := store.FindLeftovers()
	switch {
	case err != nil:
		add("state", CheckWarn, err.Error(), "")
	case left.Empty():
		add("state", CheckPass, "no leftovers of interrupted writes", "")
	case fix:
		if left, err = store.CleanLeftovers(); err != nil {
			add("state", CheckFail, err.Error(), apperr.As(err).Hint)
			return
		}
		d.Fixed = append(d.Fixed, fmt.Sprintf("removed %d orphan snapshot folder(s) and %d temp file(s) left by interrupted writes", len(left.Orphans), len(left.TempFiles)))
		add("state", CheckPass, "leftovers of interrupted writes removed", "")
	default:
		add("state", CheckWarn, fmt.Sprintf("%d orphan snapshot folder(s) and %d temp file(s) left by interrupted writes under %s", len(left.Orphans), len(left.TempFiles), store.Dir()),
			"run `agentpack doctor --fix` to remove them")
	}
}

func (e *Engine) checkLockfile(add func(name, status, msg, suggestion string), st *State) {
	path := filepath.Join(st.Repo, lockfile.FileName)
	lf, err := lockfile.LoadOn(e.Sys, abs(path))
	needsLock := false
	for _, m := range st.Manifest.Modules {
		if m.Source.Git != nil || m.Source.Package != nil {
			needsLock = true
		}
	}
	switch {
	case err != nil && apperr.CodeOf(err) == apperr.LockfileMissing:
		if needsLock {
			add("lockfile", CheckWarn, "git or package modules are not locked yet", "run `agentpack lock`")
		} else {
			add("lockfile", CheckPass, "no lockfile needed (local modules only)", "")
		}
	case err != nil:
		add("lockfile", CheckFail, err.Error(), apperr.As(err).Hint)
	default:
		var missing, changed []string
		for i := range st.Manifest.Modules {
			m := &st.Manifest.Modules[i]
			if m.Source.Git == nil && m.Source.Package == nil {
				continue
			}
			switch lm := lf.Find(m.ID); {
			case lm == nil:
				missing = append(missing, m.ID)
			case m.Source.Git != nil && !lockMatches(m, lm):
				changed = append(changed, m.ID)
			}
		}
		switch {
		case len(missing) > 0:
			add("lockfile", CheckWarn, "modules missing from the lockfile: "+strings.Join(missing, ", "), "run `agentpack lock`")
		case len(changed) > 0:
			add("lockfile", CheckWarn, "git source changed since it was locked: "+strings.Join(changed, ", "), "run `agentpack lock`")
		default:
			add("lockfile", CheckPass, "the lockfile matches agentpack.yaml", "")
		}
	}
}

func (e *Engine) checkRoot(add func(name, status, msg, suggestion string), r desired.Root) {
	name := "root:" + r.Target + ":" + r.Path.ToSlash()
	path := r.Path.String()
	fi, err := e.Sys.Stat(r.Path)
	switch {
	case err == nil && !fi.IsDir():
		add(name, CheckFail, path+" is a file, not a folder", "move the file away or change the target's path option")
		return
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		parent := r.Path
		for {
			parent = parent.Dir()
			if pfi, perr := e.Sys.Stat(parent); perr == nil {
				if !pfi.IsDir() {
					add(name, CheckFail, parent.String()+" is a file, so "+path+" cannot be created", "move the file away")
					return
				}
				break
			}
			if parent == parent.Dir() {
				break
			}
		}
		if !writable(e.Sys, parent) {
			add(name, CheckFail, path+" does not exist and "+parent.String()+" is not writable", "create it or fix permissions")
			return
		}
		add(name, CheckPass, path+" will be created on deploy", "")
		return
	case err != nil:
		add(name, CheckFail, osMessage(err), "check permissions")
		return
	}
	if !writable(e.Sys, r.Path) {
		add(name, CheckFail, path+" is not writable", "fix its permissions (chmod u+w)")
		return
	}
	var warns []string
	m := plan.ReadTargetManifest(e.Sys, plan.NewGitTracked(e.Sys, e.projectRoot()), r.Path, r.Target, func(w string) { warns = append(warns, w) })
	if len(warns) > 0 {
		add(name, CheckWarn, strings.Join(warns, "; "), "redeploy with `agentpack deploy --apply` to rewrite the manifest")
		return
	}
	msg := path + " is writable"
	if m != nil {
		msg += fmt.Sprintf("; manifest lists %d file(s)", len(m.ManagedFiles))
	}
	add(name, CheckPass, msg, "")
}

// writable reports whether sys can create a file in dir: it writes a probe
// file there and removes it.
func writable(sys fsys.System, dir fsys.AbsPath) bool { return fsys.CanWrite(sys, dir) }

// osMessage is the OS's own words for err, "stat /x: permission denied",
// as doctor reported them before every read went through fsys.
func osMessage(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return apperr.As(err).Message
}

// checkIgnored warns when a root inside a git repo would let agentpack's
// manifests be committed.
func (e *Engine) checkIgnored(add func(name, status, msg, suggestion string), st *State, fix bool, d *DoctorData) {
	done := map[fsys.AbsPath]bool{}
	gitTop := gitTops(e.Sys)
	for _, r := range st.Desired.Roots {
		top := gitTop(r.Path)
		if top == "" || done[top] {
			continue
		}
		done[top] = true
		rel, _ := filepath.Rel(top.String(), r.Path.JoinName(plan.TargetManifestName(r.Target)).String())
		if ignored(e.Sys, top, rel) {
			add("gitignore:"+top.ToSlash(), CheckPass, "agentpack manifests are git-ignored in "+top.String(), "")
			continue
		}
		ignoreFile := top.JoinName(".gitignore")
		if fix {
			if err := appendIgnore(e.Sys, ignoreFile); err == nil {
				d.Fixed = append(d.Fixed, "added "+ManifestIgnoreLine+" to "+ignoreFile.String())
				add("gitignore:"+top.ToSlash(), CheckPass, "added "+ManifestIgnoreLine+" to .gitignore", "")
				continue
			}
		}
		add("gitignore:"+top.ToSlash(), CheckWarn, "agentpack manifests in "+top.String()+" are not git-ignored",
			"add `"+ManifestIgnoreLine+"` to .gitignore, or run `agentpack doctor --fix`")
	}
}

func ignored(sys fsys.System, top fsys.AbsPath, rel string) bool {
	data, err := sys.ReadFile(top.JoinName(".gitignore"))
	if err != nil {
		return false
	}
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, nil))
	}
	return gitignore.NewMatcher(ps).Match(strings.Split(filepath.ToSlash(rel), "/"), false)
}

func appendIgnore(sys fsys.System, path fsys.AbsPath) error {
	data, err := sys.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, []byte("# agentpack target manifests\n"+ManifestIgnoreLine+"\n")...)
	return sys.WriteFile(path, data, 0o644)
}
