package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/schemas/schematest"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agentpack": func() {
			installCrashHook()
			installFakePackagesHook()
			os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// installCrashHook makes the process die after the K-th target write when
// AGENTPACK_TEST_CRASH_AFTER=K is set. It exists only in the test binary.
func installCrashHook() {
	if phase := os.Getenv("AGENTPACK_TEST_PAUSE_AT"); phase != "" {
		// Park the apply at a phase boundary so a test can interrupt it there.
		engineHook = func(e *engine.Engine) {
			e.Checkpoint = func(p string) {
				if p == phase {
					fmt.Fprintln(os.Stderr, "paused at", p)
					time.Sleep(time.Minute)
				}
			}
		}
		return
	}
	k, err := strconv.Atoi(os.Getenv("AGENTPACK_TEST_CRASH_AFTER"))
	if err != nil || k <= 0 {
		return
	}
	var n atomic.Int64 // writes run in parallel
	engineHook = func(e *engine.Engine) {
		if rs, ok := e.Sys.(*fsys.RealSystem); ok {
			state := fsys.AbsPath(e.Env.AgentpackHome)
			rs.SetAfterWrite(func(p fsys.AbsPath) {
				if state.Contains(p) {
					return // agentpack's own state (stat cache, roots), not a target write
				}
				if n.Add(1) >= int64(k) {
					os.Exit(137)
				}
			})
		}
	}
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/script"))
}

var updateScripts = os.Getenv("AGENTPACK_UPDATE_SCRIPTS") == "1"

func scriptParams(dir string) testscript.Params {
	fixtures, _ := filepath.Abs("../../fixtures")
	return testscript.Params{
		Dir:           dir,
		UpdateScripts: updateScripts,
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			for _, d := range []string{"home", "proj/.git"} {
				if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
					return err
				}
			}
			env.Setenv("HOME", filepath.Join(work, "home"))
			env.Setenv("AGENTPACK_HOME", filepath.Join(work, "home/.agentpack"))
			env.Setenv("CODEX_HOME", "")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("FIXTURES", fixtures)
			env.Cd = filepath.Join(work, "proj")
			return nil
		},
		Condition: scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"validenv":     cmdValidEnvelope,
			"jsonnorm":     cmdJSONNorm,
			"copyfix":      cmdCopyFixture,
			"writefile":    cmdWriteFile,
			"exitcode":     cmdExitCode,
			"snapid":       cmdSnapID,
			"filetree":     cmdFileTree,
			"subsetof":     cmdSubsetOf,
			"readonlytree": cmdReadOnlyTree,
			"readonlydir":  cmdReadOnlyDir,
			"resub":        cmdResub,
			"gitcommit":    cmdGitCommit, // gitrepo_cmds_test.go
			"gitshow":      cmdGitShow,
			"gitbranch":    cmdGitBranch,
			"gitcheckout":  cmdGitCheckout,
			"aamregistry":  cmdAAMRegistry, // aamregistry_cmds_test.go
			"aamcheck":     cmdAAMCheck,
		},
	}
}

// validenv FILE: FILE (usually stdout) is one envelope valid against schemas/.
func cmdValidEnvelope(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: validenv file")
	}
	data := readArg(ts, args[0])
	err := schematest.Validate(data)
	if neg {
		if err == nil {
			ts.Fatalf("envelope unexpectedly valid")
		}
		return
	}
	if err != nil {
		ts.Fatalf("invalid envelope: %v\n%s", err, data)
	}
}

var (
	snapshotID = regexp.MustCompile(`\d{8}T\d{6}\.\d{9}Z`)
	timestamp  = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	versionRe  = regexp.MustCompile(`"version": "[^"]*"`)
)

// jsonnorm FILE OUT: normalise temp paths, snapshot ids, times and the
// version so output can be compared with a golden file.
func cmdJSONNorm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonnorm file out")
	}
	s := string(readArg(ts, args[0]))
	s = strings.ReplaceAll(s, ts.Getenv("WORK"), "$WORK")
	s = snapshotID.ReplaceAllString(s, "<SNAPSHOT>")
	s = timestamp.ReplaceAllString(s, "<TIME>")
	s = versionRe.ReplaceAllString(s, `"version": "<VERSION>"`)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o644))
}

// copyfix NAME DIR: copy fixtures/NAME to DIR.
func cmdCopyFixture(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: copyfix name dir")
	}
	src := filepath.Join(ts.Getenv("FIXTURES"), args[0])
	dst := ts.MkAbs(args[1])
	ts.Check(filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, fi.Mode().Perm())
	}))
}

// writefile PATH TEXT...: write the words joined by spaces plus a newline.
func cmdWriteFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: writefile path text...")
	}
	p := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	ts.Check(os.WriteFile(p, []byte(strings.Join(args[1:], " ")+"\n"), 0o644))
}

func readArg(ts *testscript.TestScript, name string) []byte {
	switch name {
	case "stdout":
		return []byte(ts.ReadFile("stdout"))
	case "stderr":
		return []byte(ts.ReadFile("stderr"))
	}
	data, err := os.ReadFile(ts.MkAbs(name))
	ts.Check(err)
	return bytes.TrimPrefix(data, []byte{0xef, 0xbb, 0xbf})
}
