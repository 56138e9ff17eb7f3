package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Env is the part of the process environment the engine depends on. It is
// resolved once by the caller (CLI or MCP server) so tests can point every
// directory into a temp dir.
type Env struct {
	// Home is $HOME.
	Home string
	// AgentpackHome is $AGENTPACK_HOME, default ~/.agentpack.
	AgentpackHome string
	// CodexHome is $CODEX_HOME when set, else "".
	CodexHome string
	// Cwd is the working directory; the project root is derived from it.
	Cwd string
	// Fsync makes real writes fsync file and directory (AGENTPACK_FSYNC=1).
	Fsync bool
	// GitTimeout and GitRetries are $AGENTPACK_GIT_TIMEOUT (a duration
	// such as 30s, per attempt) and $AGENTPACK_GIT_RETRIES (0–10) as set;
	// they override config.toml's [git] timeout and retries.
	GitTimeout, GitRetries string
	// MachineID is $AGENTPACK_MACHINE_ID, else the host name: the default
	// machine whose overlays apply (--machine overrides it).
	MachineID string
}

// EnvFromOS reads [Env] from the process environment.
func EnvFromOS() Env {
	home, _ := os.UserHomeDir()
	if h := os.Getenv("HOME"); h != "" {
		home = h
	}
	cwd, _ := os.Getwd()
	e := Env{Home: home, CodexHome: os.Getenv("CODEX_HOME"), Cwd: cwd, Fsync: os.Getenv("AGENTPACK_FSYNC") == "1",
		GitTimeout: os.Getenv(envGitTimeout), GitRetries: os.Getenv(envGitRetries)}
	if e.MachineID = os.Getenv("AGENTPACK_MACHINE_ID"); e.MachineID == "" {
		e.MachineID, _ = os.Hostname()
	}
	e.AgentpackHome = os.Getenv("AGENTPACK_HOME")
	if e.AgentpackHome == "" {
		e.AgentpackHome = filepath.Join(home, ".agentpack")
	}
	e.AgentpackHome = e.ExpandHome(e.AgentpackHome)
	return e
}

// Check refuses home folders that are unset or relative. Under cron,
// systemd or in a container HOME may be missing, and a relative path would
// quietly put user-scope files and agentpack's state into the working
// directory, so it runs before anything uses those folders.
func (e Env) Check() error {
	switch {
	case e.Home == "":
		return envError("HOME", "is not set", "")
	case !filepath.IsAbs(e.Home):
		return envError("HOME", "is relative", e.Home)
	case !filepath.IsAbs(e.AgentpackHome):
		return envError("AGENTPACK_HOME", "is relative", e.AgentpackHome)
	}
	// ~ in CODEX_HOME is expanded the way targets expand it.
	if h := strings.TrimSpace(e.CodexHome); h != "" && !filepath.IsAbs(e.ExpandHome(h)) {
		return envError("CODEX_HOME", "is relative", e.CodexHome)
	}
	return nil
}

func envError(name, problem, value string) *apperr.Error {
	msg := "$" + name + " " + problem
	if value != "" {
		msg += fmt.Sprintf(" (%q)", value)
	}
	return apperr.New(apperr.ConfigInvalid, "%s: agentpack would put its files in the wrong place", msg).
		WithHint("set %s to an absolute path, e.g. %s=%s", name, name, envExample[name]).
		With("variable", name).With("reason_code", "env_path_invalid")
}

var envExample = map[string]string{"HOME": "/home/you", "AGENTPACK_HOME": "$HOME/.agentpack", "CODEX_HOME": "$HOME/.codex"}

// ExpandHome expands a leading "~" to Home.
func (e Env) ExpandHome(p string) string {
	if p == "~" {
		return e.Home
	}
	if strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		return filepath.Join(e.Home, p[2:])
	}
	return p
}

// StateDir is $AGENTPACK_HOME/state.
func (e Env) StateDir() string { return filepath.Join(e.AgentpackHome, "state") }

// CacheDir is $AGENTPACK_HOME/cache.
func (e Env) CacheDir() string { return filepath.Join(e.AgentpackHome, "cache") }

// DefaultRepo is $AGENTPACK_HOME/repo.
func (e Env) DefaultRepo() string { return filepath.Join(e.AgentpackHome, "repo") }

// InGitRepo reports whether Cwd is inside a git work tree, looking with sys.
func (e Env) InGitRepo(sys fsys.System) bool {
	_, found := e.gitTop(sys)
	return found
}

// ProjectRoot is the git top level of Cwd (the nearest folder up from it
// holding .git), else Cwd itself, looking with sys.
func (e Env) ProjectRoot(sys fsys.System) string {
	top, _ := e.gitTop(sys)
	return top
}

// gitTop walks up from Cwd to the first folder holding .git; found is
// false (and top is Cwd) when there is none, or Cwd is not absolute.
func (e Env) gitTop(sys fsys.System) (top string, found bool) {
	dir, err := fsys.NewAbsPath(e.Cwd)
	if err != nil {
		return e.Cwd, false
	}
	if t := gitTops(sys)(dir); t != "" {
		return t.String(), true
	}
	return e.Cwd, false
}

// gitTops finds the git top level of folders (the nearest folder up
// holding .git; "" for none), looking at each folder on the way up once
// however many of the folders asked about lie below it.
func gitTops(sys fsys.System) func(dir fsys.AbsPath) fsys.AbsPath {
	tops := map[fsys.AbsPath]fsys.AbsPath{}
	var topOf func(dir fsys.AbsPath) fsys.AbsPath
	topOf = func(dir fsys.AbsPath) fsys.AbsPath {
		if top, ok := tops[dir]; ok {
			return top
		}
		var top fsys.AbsPath
		if _, err := sys.Lstat(dir.JoinName(".git")); err == nil {
			top = dir
		} else if parent := dir.Dir(); parent != dir {
			top = topOf(parent)
		}
		tops[dir] = top
		return top
	}
	return topOf
}

// ProjectRoots is [Env.ProjectRoot] for many folders: each folder on the
// way up is looked at for .git once, however many of the folders asked
// about lie below it (a rollback's 10,000 files in 2,000 folders: a few
// thousand looks, not one walk up per file).
func ProjectRoots(sys fsys.System) func(dir string) string {
	topOf := gitTops(sys)
	return func(dir string) string {
		d, err := fsys.NewAbsPath(dir)
		if err != nil {
			return dir
		}
		if top := topOf(d); top != "" {
			return top.String()
		}
		return dir
	}
}

// abs types p, a path the engine has made absolute (from [Env], or joined
// to the repo or the working folder): only cleaning is left to do.
func abs(p string) fsys.AbsPath { return fsys.AbsPath(filepath.Clean(p)) }

// projectRoot is [Env.ProjectRoot] as the engine's System sees it.
func (e *Engine) projectRoot() fsys.AbsPath { return abs(e.Env.ProjectRoot(e.Sys)) }

// inGitRepo is [Env.InGitRepo] as the engine's System sees it.
func (e *Engine) inGitRepo() bool { return e.Env.InGitRepo(e.Sys) }

// ResolveRepo returns the absolute desired-state repo path for a --repo value.
func (e Env) ResolveRepo(repo string) string {
	if repo == "" {
		return e.DefaultRepo()
	}
	repo = e.ExpandHome(repo)
	if !filepath.IsAbs(repo) {
		repo = filepath.Join(e.Cwd, repo)
	}
	return filepath.Clean(repo)
}

// Abs is p made absolute against the working directory (and ~ expanded).
func (e Env) Abs(p string) string {
	p = e.ExpandHome(p)
	if p == "" {
		p = "."
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Cwd, p)
	}
	return filepath.Clean(p)
}
