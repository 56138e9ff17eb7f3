package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// treeSum describes every folder and file (bytes and mode) below roots.
func treeSum(t *testing.T, roots ...string) string {
	t.Helper()
	var lines []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			line := fmt.Sprintf("%s %v", p, fi.Mode())
			if d.Type().IsRegular() {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				sum := sha256.Sum256(data)
				line += " " + hex.EncodeToString(sum[:8])
			}
			lines = append(lines, line)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// makeReadOnly makes every folder and file below roots read-only (as root,
// which ignores permission bits, also immutable), undone at the end.
func makeReadOnly(t *testing.T, roots ...string) {
	t.Helper()
	var paths []string
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSymlink == 0 {
				paths = append(paths, p)
			}
			return err
		})
	}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		mode := fi.Mode().Perm()
		if err := os.Chmod(p, mode&^0o222); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(p, mode) })
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", append([]string{"+i"}, paths...)...).CombinedOutput(); err != nil {
			t.Skipf("running as root and chattr +i failed: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", append([]string{"-i"}, paths...)...).Run() })
	}
	if err := os.WriteFile(filepath.Join(roots[0], ".probe"), nil, 0o644); err == nil {
		t.Skip("this filesystem still accepts writes in a read-only folder")
	}
}

// Every read-only tool succeeds with agentpack's home and the repo made
// read-only, and not one byte of the home, the repo or the project changes.
func TestReadOnlyToolsWriteNothing(t *testing.T) {
	te := newTestEnv(t)
	e := engine.New(te.Env, targets.NewSet())
	if _, _, err := e.Deploy(context.Background(), engine.Request{Repo: te.Repo}, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(te.Project, "AGENTS.md"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, te.server(t), "2025-11-25")
	makeReadOnly(t, te.APHome, te.Repo)
	before := treeSum(t, te.Home, te.Repo, te.Project)
	calls := []struct {
		name string
		args M
	}{
		{"plan", M{}}, {"diff", M{}}, {"preview", M{"diff": true}}, {"status", M{}}, {"doctor", M{}},
		{"explain", M{"kind": "plan"}}, {"deploy", M{}}, {"snapshots", M{}},
		{"resources", M{"action": "list"}}, {"resources", M{"action": "read", "uri": URIManifest}},
		{"source_list", M{}},
	}
	for _, c := range calls {
		env := callTool(t, cs, c.name, c.args)
		if !env.OK {
			t.Errorf("%s on a read-only home: %s", c.name, env.raw)
		}
	}
	if after := treeSum(t, te.Home, te.Repo, te.Project); after != before {
		t.Fatalf("read-only tools changed files")
	}
}
