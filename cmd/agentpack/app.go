package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
	"github.com/alecthomas/kong"
	"golang.org/x/term"
)

// exitPanic carries kong's exit code out of its Exit hook.
type exitPanic struct{ code int }

// Main runs agentpack with args and returns the process exit code. It is the
// entry point for the binary and for testscript.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	if len(args) == 0 {
		args = []string{"--help"} // bare `agentpack` shows how to use it
	}
	if args[0] == completeCommand {
		// Answered before kong parses, so the hidden command is no part of
		// the model: never in --help, `help --json` or the schemas.
		return runComplete(args[1:], stdout, engine.EnvFromOS())
	}
	setVersionFromBuild()
	// The view is chosen before anything can fail, so even a flag error is an
	// envelope under --json.
	jsonMode := wantsJSON(args)
	app := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, Env: engine.EnvFromOS()}
	if isTerminal(stderr) {
		app.progressOut = stderr
	}
	app.Globals.JSON = jsonMode
	defer func() {
		if r := recover(); r != nil {
			if ep, ok := r.(exitPanic); ok {
				code = ep.code
				return
			}
			err := apperr.New(apperr.Unexpected, "internal error: %v", r).WithHint("please report this bug")
			code = app.fail(commandFromArgs(args), err)
		}
	}()
	parser, kctx, globals, err := parse(args, app)
	if err != nil {
		var be buildError
		if errors.As(err, &be) {
			return app.fail("agentpack", apperr.Wrap(be.error, apperr.Unexpected, "cannot build the command line"))
		}
		// `mcp serve`'s stdout belongs to JSON-RPC: its flag errors go to stderr.
		app.Globals.JSON = jsonMode && commandFromArgs(args) != "mcp"
		return app.fail(commandFromArgs(args), apperr.New(apperr.InvalidArgument, "%s", err.Error()).
			WithHint("run `agentpack --help` for usage"))
	}
	app.parser = parser
	if err := emptyGlobalValue(args); err != nil {
		return app.fail(commandFromArgs(args), err)
	}
	app.Globals = globals
	app.kctx = kctx
	if err := kctx.Run(app); err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			return int(ec)
		}
		return app.fail(commandFromArgs(args), err)
	}
	return 0
}

// emptyGlobalValue refuses `--repo ""` and its kin: an empty value would
// silently mean the default (another repo, every target).
func emptyGlobalValue(args []string) error {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, name := range []string{"--repo", "--profile", "--target", "--machine"} {
			empty := a == name+"=" || a == name && i+1 < len(args) && strings.TrimSpace(args[i+1]) == ""
			if empty {
				return apperr.New(apperr.InvalidArgument, "%s needs a value", name).
					WithHint("drop %s to use the default, or give it a value", name).With("flag", name)
			}
		}
	}
	return nil
}

// setVersionFromBuild uses the module version `go install …@vX` recorded,
// unless -ldflags already set envelope.Version.
func setVersionFromBuild() {
	if bi, ok := debug.ReadBuildInfo(); ok && envelope.Version == "0.1.0-dev" {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			envelope.Version = strings.TrimPrefix(v, "v")
		}
	}
}

// exitCode is returned by a command's Run after it has printed its result.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// commandFromArgs finds the command name for an envelope when parsing
// failed: the first argument that names a command (a flag's value, such as
// the DIR of --repo DIR, never does).
func commandFromArgs(args []string) string {
	names := map[string]bool{}
	t := reflect.TypeFor[CLI]()
	for i := 0; i < t.NumField(); i++ {
		if _, ok := t.Field(i).Tag.Lookup("cmd"); ok {
			names[commandName(t.Field(i))] = true
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if names[a] {
			return a
		}
	}
	return "agentpack"
}

// App is the per-invocation state bound into every command's Run.
type App struct {
	Globals Globals
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Env     engine.Env
	ctx     context.Context
	// recordOnly gives this invocation's engine a System that only
	// records; recorder is that System once the engine exists.
	recordOnly bool
	recorder   *fsys.DryRunSystem
	// readOnly gives this invocation's engine a System that refuses every
	// write but the caches': the command is not a mutating one.
	readOnly bool
	// progressOut is stderr when it is a terminal (see [App.progressTo]);
	// progress holds the bars drawn on it.
	progressOut io.Writer
	progress    *progress
	parser      *kong.Kong
	kctx        *kong.Context
	engine      *engine.Engine
}

// Ctx is the context of this invocation's engine calls.
func (a *App) Ctx() context.Context {
	if a.ctx == nil {
		return context.Background()
	}
	return a.ctx
}

// engineHook lets tests adjust every engine this process builds (crash
// injection); it is nil in the shipped binary.
var engineHook func(*engine.Engine)

// Engine returns the engine for this invocation.
func (a *App) Engine() *engine.Engine {
	if a.engine == nil {
		a.engine = a.newEngine()
	}
	return a.engine
}

// newEngine builds an engine for this environment; the MCP server builds a
// fresh one per tool call, so every call reads state fresh.
func (a *App) newEngine() *engine.Engine {
	e := engine.New(a.Env, targets.NewSet())
	e.SourceCache = &engine.SourceCache{Build: buildID()}
	switch {
	case a.recordOnly:
		a.recorder = fsys.NewDryRunSystem(e.Sys)
		e.Sys = a.recorder
	case a.readOnly:
		e.ReadOnly()
	}
	if !a.Globals.JSON && !a.Globals.Quiet {
		e.OnLockWait = func(msg string) {
			fmt.Fprintf(a.Stderr, "%s %s; waiting up to %s…\n", a.errPrinter().dim("agentpack:"), msg, engine.LockTimeout)
		}
	}
	a.attachProgress(e)
	if engineHook != nil {
		engineHook(e)
	}
	return e
}

// recordingEngine returns a new engine whose System only records: the
// same walk as this invocation's engine, to show what it would change
// before asking.
func (a *App) recordingEngine() *engine.Engine {
	e := engine.New(a.Env, targets.NewSet())
	e.Sys = fsys.NewDryRunSystem(e.Sys)
	return e
}

// Request builds an engine request from the global flags.
func (a *App) Request() engine.Request {
	return engine.Request{Repo: a.Globals.Repo, Profile: a.Globals.Profile, Target: a.Globals.Target, Machine: a.Globals.Machine,
		AllowHomeProject: a.Globals.AllowHomeProject}
}

// envFreeCommands never touch agentpack's folders, so they work without HOME.
var envFreeCommands = map[string]bool{"version": true, "help": true, "schema": true, "completion": true}

// result is what a command hands back for rendering.
type result struct {
	Data     any
	Warnings []string
	// Human prints the human view; nil prints nothing.
	Human func(p *Printer)
	// Summary is the one line -q still prints.
	Summary string
	// previewed marks a --dry-run result already rendered as a dry run.
	previewed bool
	// ExitCode, when not 0, is the exit code after a successful run
	// (--exit-code: 2 when there are changes or drift).
	ExitCode int
}

// run executes fn and renders its result as an envelope (--json) or as
// human output, returning the exit code as an error for kong.
func (a *App) run(command, commandID string, fn func() (*result, error)) error {
	start := time.Now()
	if a.Globals.Verbose && !a.Globals.JSON {
		defer func() {
			fmt.Fprintf(a.Stderr, "%s repo %s, profile %s, target %s; %s took %s\n", a.errPrinter().dim("agentpack:"),
				a.Env.ResolveRepo(a.Globals.Repo), a.Globals.Profile, a.Globals.Target, commandID, time.Since(start).Round(time.Millisecond))
		}()
	}
	if isMutating(commandID) {
		defer a.sayWhenInterrupted()()
	}
	// The command capability table picks the engine's System (App.newEngine):
	// one that only records for a recorded dry run, one that refuses writes
	// for a command that does not mutate, the real one otherwise.
	switch {
	case a.Globals.DryRun && dryRunCommands[commandID] == recordedDryRun:
		a.recordOnly = true
	case !isMutating(commandID):
		a.readOnly = true
	}
	var res *result
	var err error
	switch {
	case a.Globals.DryRun && isMutating(commandID) && dryRunCommands[commandID] == noDryRun:
		err = apperr.New(apperr.InvalidArgument, "`%s` has no --dry-run; nothing was written", commandID).
			WithHint("run it without --dry-run, or use `agentpack plan` to see what a deploy would do").With("command", commandID)
	case !envFreeCommands[command]:
		// An unset or relative HOME would put user-scope files and the state
		// into the working directory.
		if err = a.Env.Check(); err == nil {
			res, err = a.confirmed(commandID, fn)
		}
	default:
		res, err = fn()
	}
	a.progress.clear()
	if err != nil {
		var warnings []string
		if res != nil {
			warnings = res.Warnings
		}
		return exitCode(a.failWith(command, commandID, err, warnings))
	}
	if a.recorder != nil && !res.previewed {
		warnings := res.Warnings
		res = a.dryRunPreview(res.Data)
		res.Warnings = warnings
	}
	if a.Globals.JSON {
		a.writeEnvelope(envelope.New(command, commandID).Succeed(res.Data, res.Warnings))
	} else {
		p := a.printer()
		// One write per 64 KiB instead of one per line: a plan of 10,000
		// creates is 10,000 lines. Flushed before the warnings, so the two
		// streams keep their order on a terminal.
		out := bufio.NewWriterSize(a.Stdout, 64<<10)
		p.W = out
		switch {
		case !a.Globals.Quiet && res.Human != nil:
			res.Human(p)
		case a.Globals.Quiet && res.Summary != "":
			p.Printf("%s\n", res.Summary)
		}
		_ = out.Flush()
		for _, w := range res.Warnings {
			fmt.Fprintf(a.Stderr, "%s %s\n", p.yellow("warning:"), w)
		}
	}
	if res.ExitCode != 0 {
		return exitCode(res.ExitCode)
	}
	return nil
}

// sayWhenInterrupted makes Ctrl-C or SIGTERM during a mutation say what
// happens next before the process ends (exit 130); the journal makes the
// next command roll a partial apply back. It returns the function that
// stops listening.
func (a *App) sayWhenInterrupted() func() {
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sig:
			fmt.Fprintf(a.Stderr, "%s interrupted; if files were being written, the next agentpack command rolls the partial apply back\n", a.errPrinter().dim("agentpack:"))
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}

// changesExitCode is what --exit-code makes of a result: 2 when there is
// something to do (like `git diff --exit-code` and terraform's
// -detailed-exitcode), else 0.
func changesExitCode(flag bool, changes int) int {
	if flag && changes > 0 {
		return 2
	}
	return 0
}

// writeEnvelope encodes env straight to stdout through a buffer, never
// holding the whole document as one more slice.
func (a *App) writeEnvelope(env *envelope.Envelope) {
	w := bufio.NewWriterSize(a.Stdout, 64<<10)
	_ = env.Encode(w)
	_ = w.Flush()
}

func (a *App) fail(command string, err error) int {
	return a.failWith(command, command, err, nil)
}

func (a *App) failWith(command, commandID string, err error, warnings []string) int {
	if a.Globals.JSON {
		a.writeEnvelope(envelope.New(command, commandID).Fail(err, warnings))
		return 1
	}
	p := a.errPrinter()
	for _, w := range warnings {
		fmt.Fprintf(a.Stderr, "%s %s\n", p.yellow("warning:"), w)
	}
	ae := apperr.As(err)
	fmt.Fprintf(a.Stderr, "%s [%s] %s\n", p.red("error:"), ae.Code, ae.Message)
	printErrorPaths(a.Stderr, p, ae)
	if ae.Hint != "" {
		fmt.Fprintf(a.Stderr, "%s %s\n", p.dim("hint:"), ae.Hint)
	}
	return 1
}

// requireYesInJSON refuses a mutation in --json mode without --yes (the
// terminal prompt is [App.confirmed]'s).
func (a *App) requireYesInJSON(commandID string) error {
	if a.Globals.JSON && !a.Globals.Yes && !a.Globals.DryRun {
		return a.confirm(commandID, "")
	}
	return nil
}

// printErrorPaths lists the files an error is about (details.paths, else
// details.path), so people need not switch to --json to learn which.
func printErrorPaths(w io.Writer, p *Printer, ae *apperr.Error) {
	var paths []string
	switch v := ae.Details["paths"].(type) {
	case []string:
		paths = v
	}
	if len(paths) == 0 {
		if v, ok := ae.Details["path"].(string); ok && !strings.Contains(ae.Message, v) {
			paths = []string{v}
		}
	}
	const max = 10
	for i, path := range paths {
		if i == max {
			fmt.Fprintf(w, "  … and %d more (see --json)\n", len(paths)-max)
			break
		}
		fmt.Fprintf(w, "  %s\n", p.Path(path))
	}
}

// confirm asks the user before a mutation. In --json mode, or without a
// terminal, only --yes confirms.
func (a *App) confirm(commandID, question string) error {
	if a.Globals.Yes {
		return nil
	}
	refuse := apperr.New(apperr.ConfirmRequired, "refusing to run '%s' without --yes", commandID).
		WithHint("re-run with --yes to confirm").
		With("command", commandID).With("reason_code", "confirm_required").With("next_actions", []string{"retry_with_yes"})
	if a.Globals.JSON || !isTerminal(a.Stdin) {
		return refuse
	}
	a.progress.clear()
	fmt.Fprintf(a.Stderr, "%s [y/N] ", question)
	var answer string
	_, _ = fmt.Fscanln(a.Stdin, &answer)
	if a := strings.ToLower(strings.TrimSpace(answer)); a == "y" || a == "yes" {
		return nil
	}
	return apperr.New(apperr.ConfirmRequired, "cancelled").WithHint("nothing was changed")
}

// isTerminal reports whether r or w is a real terminal (not /dev/null,
// which is a character device too).
func isTerminal(rw any) bool {
	f, ok := rw.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
