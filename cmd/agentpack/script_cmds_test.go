package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// exitcode N PROG ARGS...: run PROG like exec, keep its stdout and stderr
// for the next commands, and fail unless it exits with status N.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// snapid FILE VAR [PATH]: set the env var VAR to a snapshot id read from the
// JSON envelope in FILE (usually stdout). PATH is a dotted path such as
// data.snapshots.0.id; without it data.snapshot_id, then
// data.event_snapshot_id, is used.
func cmdSnapID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: snapid file var [path]")
	}
	var doc any
	if err := json.Unmarshal(readArg(ts, args[0]), &doc); err != nil {
		ts.Fatalf("snapid: %s is not JSON: %v", args[0], err)
	}
	paths := []string{"data.snapshot_id", "data.event_snapshot_id"}
	if len(args) == 3 {
		paths = []string{args[2]}
	}
	for _, p := range paths {
		if s, ok := jsonAt(doc, p).(string); ok && s != "" {
			ts.Setenv(args[1], s)
			return
		}
	}
	ts.Fatalf("snapid: no snapshot id at %s", strings.Join(paths, " or "))
}

func jsonAt(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// filetree OUT DIR...: write to OUT one line per file and link under each
// DIR ("<path relative to $WORK> <mode> <sha256 prefix>" or "<path> link ->
// <target>"), sorted, so two states of the disk can be compared with cmp.
// Folders themselves are not listed (an empty folder left behind is not a
// difference), folders named .agentpack (agentpack's own state) are skipped,
// and a missing DIR lists nothing. With -x REGEXP, paths matching REGEXP
// are left out.
func cmdFileTree(ts *testscript.TestScript, neg bool, args []string) {
	all := false // -all: include agentpack's own folders (.agentpack)
	if len(args) > 0 && args[0] == "-all" {
		all, args = true, args[1:]
	}
	var exclude *regexp.Regexp
	if len(args) > 1 && args[0] == "-x" {
		var err error
		exclude, err = regexp.Compile(args[1])
		ts.Check(err)
		args = args[2:]
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: filetree [-x regexp] out dir...")
	}
	work := ts.Getenv("WORK")
	var lines []string
	for _, d := range args[1:] {
		root := ts.MkAbs(d)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == root {
					return nil
				}
				return err
			}
			rel, _ := filepath.Rel(work, p)
			rel = filepath.ToSlash(rel)
			if exclude != nil && !e.IsDir() && exclude.MatchString(rel) {
				return nil
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			switch {
			case e.IsDir():
				if e.Name() == ".agentpack" && !all {
					return filepath.SkipDir
				}
			case e.Type()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				lines = append(lines, fmt.Sprintf("%s link -> %s", rel, filepath.ToSlash(target)))
			default:
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				sum := sha256.Sum256(data)
				lines = append(lines, fmt.Sprintf("%s %04o %s", rel, info.Mode().Perm(), hex.EncodeToString(sum[:])[:16]))
			}
			return nil
		})
		ts.Check(err)
	}
	sort.Strings(lines)
	out := strings.Join(lines, "\n")
	if out != "" {
		out += "\n"
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(out), 0o644))
}

// subsetof FILE A...: every line of FILE is a line of one of the files A...
// (with filetree: every file on disk has the complete bytes of one of the
// states A...; a half-written or temp file fails).
func cmdSubsetOf(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: subsetof file a...")
	}
	known := map[string]bool{}
	for _, a := range args[1:] {
		for _, line := range strings.Split(string(readArg(ts, a)), "\n") {
			known[line] = true
		}
	}
	var bad []string
	for _, line := range strings.Split(string(readArg(ts, args[0])), "\n") {
		if !known[line] {
			bad = append(bad, line)
		}
	}
	if len(bad) > 0 {
		ts.Fatalf("lines of %s found in none of %s:\n%s", args[0], strings.Join(args[1:], ", "), strings.Join(bad, "\n"))
	}
}

// readonlydir DIR...: make each DIR refuse new files. A non-root user gets
// chmod 555. root ignores permission bits, so for root the folder is also
// made immutable with chattr +i (scripts guard with [exec:chattr]); if that
// does not make it refuse a probe file, the command fails saying why. Every
// folder is made writable again when the script ends, so $WORK can be
// removed.
func cmdReadOnlyDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: readonlydir dir...")
	}
	for _, d := range args {
		dir := ts.MkAbs(d)
		ts.Check(os.Chmod(dir, 0o555))
		ts.Defer(func() { _ = os.Chmod(dir, 0o755) })
		if os.Geteuid() == 0 {
			if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
				ts.Fatalf("running as root, which ignores permission bits, and `chattr +i %s` failed (%v: %s); run the tests as a normal user", dir, err, strings.TrimSpace(string(out)))
			}
			ts.Defer(func() { _ = exec.Command("chattr", "-i", dir).Run() })
		}
		// Prove that the folder really refuses new files before relying on it.
		probe := filepath.Join(dir, ".readonlydir-probe")
		if err := os.WriteFile(probe, nil, 0o644); err == nil {
			_ = os.Remove(probe)
			ts.Fatalf("%s still accepts new files after chmod 555 (and chattr +i for root) on this filesystem", dir)
		}
	}
}

// readonlytree DIR...: make every folder and file below DIR read-only
// (chmod a-w, and as root, which ignores permission bits, chattr +i), undone
// when the script ends.
func cmdReadOnlyTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: readonlytree dir...")
	}
	for _, d := range args {
		root := ts.MkAbs(d)
		var paths []string
		ts.Check(filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type()&fs.ModeSymlink == 0 {
				paths = append(paths, p)
			}
			return err
		}))
		for _, p := range paths {
			fi, err := os.Lstat(p)
			ts.Check(err)
			mode := fi.Mode().Perm()
			ts.Check(os.Chmod(p, mode&^0o222))
			ts.Defer(func() { _ = os.Chmod(p, mode) })
		}
		if os.Geteuid() == 0 {
			if out, err := exec.Command("chattr", append([]string{"+i"}, paths...)...).CombinedOutput(); err != nil {
				ts.Fatalf("running as root and `chattr +i` failed (%v: %s); run the tests as a normal user", err, strings.TrimSpace(string(out)))
			}
			ts.Defer(func() { _ = exec.Command("chattr", append([]string{"-i"}, paths...)...).Run() })
		}
		probe := filepath.Join(root, ".readonlytree-probe")
		if err := os.WriteFile(probe, nil, 0o644); err == nil {
			_ = os.Remove(probe)
			ts.Fatalf("%s still accepts new files", root)
		}
	}
}

// resub FILE REGEXP REPLACEMENT: replace every match of REGEXP in FILE
// (a golden-normalisation helper for values such as the Go version).
func cmdResub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: resub file regexp replacement")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	p := ts.MkAbs(args[0])
	data, err := os.ReadFile(p)
	ts.Check(err)
	ts.Check(os.WriteFile(p, re.ReplaceAll(data, []byte(args[2])), 0o644))
}
