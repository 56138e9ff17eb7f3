package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// editOp is one kind of random step; do takes one and says what it did.
type editOp struct {
	name string
	do   func(rng *rand.Rand) string
}

// onePath is an editOp's do that edits one path of list (nothing when
// list is empty) with edit, which says what it did.
func onePath(list func() []string, edit func(rng *rand.Rand, path string) string) func(*rand.Rand) string {
	return func(rng *rand.Rand) string {
		paths := list()
		if len(paths) == 0 {
			return "nothing"
		}
		return edit(rng, paths[rng.IntN(len(paths))])
	}
}

// ops are the steps the random tests take: edits of the sources, the
// deployed files and the repo, deploys, rollbacks and prunes of old
// snapshots (unless w.keepSnapshots), and (with w.switches) moves to the
// other project and other flags.
func (w *editWorld) ops() []editOp {
	skillFiles := func() []string { return w.files(filepath.Join(w.repo, "modules", "skills")) }
	out := []editOp{
		{"source same size", onePath(w.textSources, w.sameSize(false))},
		{"source same size, new inode", onePath(w.textSources, w.sameSize(true))},
		{"source grows", onePath(w.textSources, w.appendLine)},
		{"source touched", onePath(w.sources, w.touch)},
		{"source mode", onePath(w.sources, w.chmod)},
		{"source removed", onePath(skillFiles, w.remove)},
		{"source added", onePath(skillFiles, w.addBeside)},
		{"target same size", onePath(w.plainTargets, w.sameSize(false))},
		{"target same size, new inode", onePath(w.plainTargets, w.sameSize(true))},
		{"target grows", onePath(w.plainTargets, w.appendLine)},
		{"source follows a hand edit", onePath(w.textSources, w.followHandEdit)},
		{"target touched", onePath(w.targets, w.touch)},
		{"target mode", onePath(w.targets, w.chmod)},
		{"target removed", onePath(w.targets, w.remove)},
		{"target extra", onePath(w.plainTargets, w.addBeside)},
		{"config entry", onePath(w.configs, w.configEntry)},
		{"overlay", onePath(skillFiles, w.overlay)},
		{"mcp module", w.mcpModule},
		{"manifest", w.manifest},
		{"targets", w.targetsConfig},
		{"deploy", func(rng *rand.Rand) string {
			args := []string{"deploy", "--apply", "--yes"}
			if rng.IntN(2) == 0 {
				args = append(args, "--adopt")
			}
			if w.run(args...).OK {
				w.nothingLeftToDeploy(args)
			}
			return strings.Join(args, " ")
		}},
		{"rollback", func(*rand.Rand) string {
			w.run("rollback", "--last", "--yes")
			return "rollback --last"
		}},
	}
	if !w.keepSnapshots {
		out = append(out, editOp{"prune", func(rng *rand.Rand) string {
			keep := strconv.Itoa(2 + rng.IntN(4))
			w.run("snapshots", "prune", "--keep", keep, "--yes")
			return "snapshots prune --keep " + keep
		}})
	}
	if w.switches {
		out = append(out,
			editOp{"other project", w.otherProject},
			editOp{"profile", w.toggleFlag("--profile", "work")},
			editOp{"target", w.toggleFlag("--target", "codex")})
	}
	return out
}

func (w *editWorld) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

// sameSize rewrites a file with bytes of the same length (one more when
// it has no body) and puts its times back: only its ctime (and, with
// newInode, its inode) tells.
func (w *editWorld) sameSize(newInode bool) func(rng *rand.Rand, path string) string {
	return func(rng *rand.Rand, path string) string {
		fi, err := os.Stat(path)
		w.must(err)
		data, err := os.ReadFile(path)
		w.must(err)
		// A byte of the body: one of a front matter could make the
		// module invalid, which is another test.
		body := 0
		if bytes.HasPrefix(data, []byte("---\n")) {
			if end := bytes.Index(data[4:], []byte("\n---\n")); end >= 0 {
				body = 4 + end + 5
			}
		}
		if body >= len(data) {
			data = append(data, 'x')
		} else {
			data[body+rng.IntN(len(data)-body)] = "abcdefghij"[rng.IntN(10)]
		}
		if newInode {
			tmp := path + ".new"
			w.must(os.WriteFile(tmp, data, fi.Mode().Perm()))
			w.must(os.Rename(tmp, path))
		} else {
			w.must(os.WriteFile(path, data, fi.Mode().Perm()))
		}
		w.must(os.Chtimes(path, fi.ModTime(), fi.ModTime()))
		return path
	}
}

func (w *editWorld) appendLine(rng *rand.Rand, path string) string {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	w.must(err)
	_, err = fmt.Fprintf(f, "line %d\n", rng.IntN(1000))
	w.must(err)
	w.must(f.Close())
	return path
}

// followHandEdit edits the deployed copies of the source file src by
// hand (a line added to each file holding src's bytes) and then src the
// same way: the repo now wants what the files were edited to, as after
// `evolve propose`. The plan has nothing to write, but the target
// manifests still record the old bytes.
func (w *editWorld) followHandEdit(rng *rand.Rand, src string) string {
	deployAfter := rng.IntN(2) == 0
	if deployAfter {
		// From a tree in sync, so the plan after the edits has nothing
		// to write and is kept.
		w.run("deploy", "--apply", "--yes", "--adopt", "--force")
	}
	was, err := os.ReadFile(src)
	w.must(err)
	line := fmt.Sprintf("followed %d\n", rng.IntN(1000))
	copies := 0
	for _, t := range w.plainTargets() {
		if data, err := os.ReadFile(t); err == nil && bytes.Equal(data, was) {
			w.must(os.WriteFile(t, append(data, line...), 0o644))
			copies++
		}
	}
	w.must(os.WriteFile(src, append(was, line...), 0o644))
	what := fmt.Sprintf("%s and %d deployed copies", src, copies)
	if deployAfter {
		// Deployed once the plan that has nothing to write was kept.
		time.Sleep(150 * time.Millisecond) // past the caches' racy window
		w.run("plan")
		args := []string{"deploy", "--apply", "--yes"}
		if w.run(args...).OK {
			w.nothingLeftToDeploy(args)
		}
		what += ", then planned and deployed"
	}
	return what
}

// nothingLeftToDeploy fails the test unless a deploy with no cache at
// all, right after a deploy with args through the caches succeeded, has
// nothing to write: not a file and not a target manifest (a deploy that
// answered "no changes" from a kept answer must have had none).
func (w *editWorld) nothingLeftToDeploy(args []string) {
	w.t.Helper()
	again := w.runWithoutCaches(args...)
	if !again.OK || again.Data.(map[string]any)["applied"] != false {
		w.t.Fatalf("after %q with caches, the same deploy without them still had work to do:\n%s\n(replay with AGENTPACK_TEST_SEED=%d)",
			args, indent(again), w.seed)
	}
}

// touch moves a file's times only, into the last hour.
func (w *editWorld) touch(rng *rand.Rand, path string) string {
	at := time.Now().Add(-time.Duration(rng.IntN(3600)) * time.Second)
	w.must(os.Chtimes(path, at, at))
	return path
}

// chmod flips a file's execute bits.
func (w *editWorld) chmod(_ *rand.Rand, path string) string {
	fi, err := os.Stat(path)
	w.must(err)
	w.must(os.Chmod(path, fi.Mode().Perm()^0o111))
	return path
}

func (w *editWorld) remove(_ *rand.Rand, path string) string {
	if filepath.Base(path) == "SKILL.md" && strings.HasPrefix(path, w.repo) {
		return "nothing" // a skill without its main file is another test
	}
	w.must(os.Remove(path))
	return path
}

// addBeside adds a file in the folder of path.
func (w *editWorld) addBeside(_ *rand.Rand, path string) string {
	w.n++
	added := filepath.Join(filepath.Dir(path), fmt.Sprintf("added-%d.md", w.n))
	w.must(os.WriteFile(added, []byte(fmt.Sprintf("added %d\n", w.n)), 0o644))
	return added
}

// configEntry adds or removes one of the user's own servers in a config
// file agentpack shares, or changes agentpack's entry there.
func (w *editWorld) configEntry(rng *rand.Rand, path string) string {
	ours := rng.IntN(3) == 0
	w.must(toggleEntry(path, fmt.Sprintf("user%d", rng.IntN(2)), ours))
	if ours {
		return "agentpack's entry in " + path
	}
	return "the user's entry in " + path
}

// overlay replaces one of the skill's files (src) in its global or project
// overlay folder, or removes the replacement there.
func (w *editWorld) overlay(rng *rand.Rand, src string) string {
	scope := [...]string{"global", "project"}[rng.IntN(2)]
	a := w.run("overlay", "path", "skill:release-notes", "--scope", scope)
	data, _ := a.Data.(map[string]any)
	dir, _ := data["overlay_dir"].(string)
	rel, err := filepath.Rel(filepath.Join(w.repo, "modules", "skills", "release-notes"), src)
	w.must(err)
	if dir == "" || strings.HasPrefix(rel, "..") {
		return "nothing"
	}
	dst := filepath.Join(dir, rel)
	if _, err := os.Stat(dst); err == nil && rng.IntN(2) == 0 {
		w.must(os.Remove(dst))
		return "removed " + dst
	}
	old, err := os.ReadFile(src)
	w.must(err)
	w.must(os.MkdirAll(filepath.Dir(dst), 0o755))
	w.must(os.WriteFile(dst, append(old, fmt.Sprintf("overlaid %d\n", rng.IntN(1000))...), 0o644))
	return dst
}

// mcpModule changes the MCP server module's arguments.
func (w *editWorld) mcpModule(*rand.Rand) string {
	w.swap(filepath.Join(w.repo, "modules", "mcp", "fs.yaml"), `"."]`, `"./src"]`)
	return "its args"
}

// manifest moves the reviewer agent or the MCP server between the work
// and base profiles: out of the default one, its files (or its entries of
// the shared config files) go at the next deploy.
func (w *editWorld) manifest(rng *rand.Rand) string {
	module, at := "agent:reviewer", "\n    source:\n      local_path:\n        path: modules/agents"
	if rng.IntN(2) == 0 {
		module, at = "mcp:fs", "\n    source:\n      local_path:\n        path: modules/mcp"
	}
	w.swap(filepath.Join(w.repo, "agentpack.yaml"), "tags: [work]"+at, "tags: [base]"+at)
	return module + "'s tags"
}

// targetsConfig changes the targets agentpack.yaml configures: cursor
// goes or comes back (its files go with it), or codex moves between both
// scopes and the project's alone.
func (w *editWorld) targetsConfig(rng *rand.Rand) string {
	manifest := filepath.Join(w.repo, "agentpack.yaml")
	if rng.IntN(2) == 0 {
		w.swap(manifest, "  cursor:\n    mode: files\n    scope: project\n", "  # no cursor\n")
		return "cursor configured or not"
	}
	w.swap(manifest, "  codex:\n    mode: files\n    scope: both\n", "  codex:\n    mode: files\n    scope: project\n")
	return "codex's scope"
}

// swap replaces a with b in the file at path, or b with a when a is not
// there.
func (w *editWorld) swap(path, a, b string) {
	data, err := os.ReadFile(path)
	w.must(err)
	if !bytes.Contains(data, []byte(a)) {
		a, b = b, a
	}
	w.must(os.WriteFile(path, bytes.Replace(data, []byte(a), []byte(b), 1), 0o644))
}

// otherProject makes the other project the working folder.
func (w *editWorld) otherProject(*rand.Rand) string {
	if w.proj == w.projects[0] {
		w.proj = w.projects[1]
	} else {
		w.proj = w.projects[0]
	}
	w.t.Chdir(w.proj)
	return w.proj
}

// toggleFlag makes flag one of the flags every command passes, or drops it.
func (w *editWorld) toggleFlag(flag ...string) func(*rand.Rand) string {
	return func(*rand.Rand) string {
		if i := slices.Index(w.flags, flag[0]); i >= 0 {
			w.flags = slices.Delete(w.flags, i, i+len(flag))
			return "without " + flag[0]
		}
		w.flags = append(w.flags, flag...)
		return strings.Join(flag, " ")
	}
}
