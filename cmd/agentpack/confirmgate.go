package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/internal/fsys"
)

// selfConfirming are the mutating commands that show their own plan before
// asking (deploy, import and rollback know better than a file list what
// they will change); [App.confirmed] leaves them alone.
var selfConfirming = map[string]bool{"deploy --apply": true, "import --apply": true, "rollback": true}

// confirmed runs fn once the user agreed to what it will change. Without
// --yes a mutating command is refused under --json or without a terminal;
// in a terminal it first runs as its dry run (on a recording System),
// shows what that would change
// on stderr, and asks. A dry run that would change nothing runs the command
// without asking; one that fails fails before asking.
func (a *App) confirmed(commandID string, fn func() (*result, error)) (*result, error) {
	if !isMutating(commandID) || selfConfirming[commandID] || a.Globals.Yes || a.Globals.DryRun {
		return fn()
	}
	if a.Globals.JSON || !isTerminal(a.Stdin) {
		return nil, a.confirm(commandID, "")
	}
	var shown bool
	var res *result
	var err error
	if dryRunCommands[commandID] == recordedDryRun {
		res, shown, err = a.showRecorded(commandID, fn)
	}
	if err != nil {
		return res, err
	}
	if shown {
		if err := a.confirm(commandID, "Make these changes?"); err != nil {
			return warningsOnly(res), err
		}
	}
	return fn()
}

// showRecorded runs fn on an engine whose System only records and prints
// the files it would write or remove; it reports whether there was any.
func (a *App) showRecorded(commandID string, fn func() (*result, error)) (*result, bool, error) {
	a.engine, a.recordOnly = nil, true
	res, err := fn()
	rec := a.recorder
	a.engine, a.recordOnly, a.recorder = nil, false, nil
	if err != nil || rec == nil {
		return res, false, err
	}
	a.progress.clear()
	lines := changeLines(a.errPrinter(), rec.Ops(), fsys.AbsPath(a.Env.CacheDir()))
	if len(lines) == 0 {
		return res, false, nil
	}
	p := a.errPrinter()
	p.Printf("%s will change:\n", p.bold("agentpack "+commandID))
	printCapped(p, lines)
	// One file edited (agentpack.yaml for add and remove, the lockfile
	// for lock): show how, when the diff is short.
	if w := a.recordedWrites(rec); len(lines) == 1 && len(w) == 1 && !strings.HasPrefix(w[0].Unified, "--- /dev/null") &&
		strings.Count(w[0].Unified, "\n") <= 60 {
		p.Diff(w[0].Unified)
	}
	return res, true, nil
}

// changeLines describes recorded mutations one line each: files written or
// removed, folders removed, links made; the git cache's files are counted
// on one line (a checkout has many).
func changeLines(p *Printer, ops []fsys.Op, cache fsys.AbsPath) []string {
	seen := map[string]bool{}
	var lines []string
	cached := 0
	for _, op := range ops {
		var verb string
		switch op.Kind {
		case fsys.OpWrite, fsys.OpSymlink:
			verb = p.green("write ")
		case fsys.OpRemove:
			verb = p.red("remove")
		case fsys.OpRemoveAll:
			verb = p.red("remove")
		case fsys.OpRename:
			verb = p.green("write ")
		default:
			continue
		}
		if cache.Contains(op.Path) {
			if op.Kind == fsys.OpWrite || op.Kind == fsys.OpSymlink {
				cached++
			}
			continue
		}
		line := verb + "  " + p.Path(op.Path.String())
		if op.Kind == fsys.OpRemoveAll {
			line += string(filepath.Separator)
		}
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	sort.Strings(lines)
	if cached > 0 {
		lines = append(lines, fmt.Sprintf("%s  %d file(s) into the git cache %s", p.green("fetch "), cached, p.Path(cache.String())))
	}
	return lines
}

// printCapped prints lines indented, at most 15 of them.
func printCapped(p *Printer, lines []string) {
	const max = 15
	for i, l := range lines {
		if i == max {
			p.Printf("  … and %d more\n", len(lines)-max)
			break
		}
		p.Printf("  %s\n", l)
	}
}

// warningsOnly keeps a preview's warnings for a refused command.
func warningsOnly(res *result) *result {
	if res == nil {
		return nil
	}
	return &result{Warnings: res.Warnings}
}
