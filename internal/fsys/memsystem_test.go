package fsys

import (
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"testing"
)

// step is one call in a conformance scenario; it returns what it observed.
type step struct {
	name string
	do   func(sys System, root AbsPath) (string, error)
}

func write(rel RelPath, data string, perm fs.FileMode) step {
	return step{"write " + string(rel), func(sys System, root AbsPath) (string, error) {
		return "", sys.WriteFile(root.Join(rel), []byte(data), perm)
	}}
}

func read(rel RelPath) step {
	return step{"read " + string(rel), func(sys System, root AbsPath) (string, error) {
		data, err := sys.ReadFile(root.Join(rel))
		return string(data), err
	}}
}

func stat(rel RelPath, follow bool) step {
	return step{fmt.Sprintf("stat(follow=%v) %s", follow, rel), func(sys System, root AbsPath) (string, error) {
		stat := sys.Lstat
		if follow {
			stat = sys.Stat
		}
		fi, err := stat(root.Join(rel))
		if err != nil || fi.IsDir() { // folder sizes and umask-ed modes differ by design
			return fmt.Sprintf("isdir=%v", err == nil), err
		}
		return fmt.Sprintf("%s %v %d", fi.Name(), fi.Mode(), fi.Size()), nil
	}}
}

func list(rel RelPath) step {
	return step{"list " + string(rel), func(sys System, root AbsPath) (string, error) {
		entries, err := sys.ReadDir(root.Join(rel))
		var names []string
		for _, e := range entries {
			names = append(names, fmt.Sprintf("%s:%v", e.Name(), e.Type()))
		}
		return strings.Join(names, " "), err
	}}
}

func readlink(rel RelPath) step {
	return step{"readlink " + string(rel), func(sys System, root AbsPath) (string, error) {
		return sys.Readlink(root.Join(rel))
	}}
}

func mutate(name string, f func(sys System, root AbsPath) error) step {
	return step{name, func(sys System, root AbsPath) (string, error) { return "", f(sys, root) }}
}

func remove(rel RelPath, all bool) step {
	return mutate(fmt.Sprintf("remove(all=%v) %s", all, rel), func(sys System, root AbsPath) error {
		if all {
			return sys.RemoveAll(root.Join(rel))
		}
		return sys.Remove(root.Join(rel))
	})
}

func mkdir(rel RelPath) step {
	return mutate("mkdir "+string(rel), func(sys System, root AbsPath) error { return sys.MkdirAll(root.Join(rel), 0o755) })
}

func rename(from, to RelPath) step {
	return mutate("rename "+string(from)+" "+string(to), func(sys System, root AbsPath) error {
		return sys.Rename(root.Join(from), root.Join(to))
	})
}

func symlink(target string, rel RelPath) step {
	return mutate("symlink "+string(rel)+" -> "+target, func(sys System, root AbsPath) error {
		return sys.Symlink(target, root.Join(rel))
	})
}

// conformance lists scenarios that RealSystem and MemSystem must answer
// identically: same results, same error codes and messages, same tree.
var conformance = map[string][]step{
	"write and read": {
		write("a/b/c.txt", "hi", 0o640), read("a/b/c.txt"), stat("a/b/c.txt", false), stat("a", true),
		list("a/b"), write("a/b/c.txt", "again", 0o600), read("a/b/c.txt"), stat("a/b/c.txt", true),
	},
	"missing paths": {
		read("nope"), stat("nope", false), stat("nope/x", true), list("nope"), readlink("nope"),
		remove("nope", false), remove("nope/x", true), rename("nope", "other"),
	},
	"file where a folder should be": {
		write("f", "x", 0o644), read("f/x"), stat("f/x", false), write("f/x", "y", 0o644),
		mkdir("f"), mkdir("f/x"), list("f"), remove("f/x", false), readlink("f"),
	},
	"folders": {
		mkdir("d/e"), write("d/e/x", "1", 0o644), list("d"), remove("d", false), read("d"),
		write("d", "no", 0o644), remove("d/e/x", false), remove("d/e", false), write("d/y", "2", 0o644),
		remove("d", true), stat("d", false), list(""),
	},
	"symlinks": {
		symlink("target.txt", "link"), read("link"), stat("link", false), stat("link", true),
		write("target.txt", "t", 0o644), read("link"), stat("link", true), readlink("link"),
		readlink("target.txt"), write("link", "through", 0o644), symlink("x", "link"),
		mkdir("real"), symlink("real", "dl"), write("dl/in.txt", "via link", 0o644), list("dl"),
		read("real/in.txt"), mkdir("dl"), mkdir("dl/sub"), symlink("missing", "dangling"), mkdir("dangling"),
		remove("dl", false), stat("real/in.txt", false), symlink("loop", "loop"), read("loop"),
		symlink("../"+"outside", "up"), readlink("up"), list(""),
	},
	"rename": {
		write("a", "A", 0o644), rename("a", "b"), read("a"), read("b"), write("c", "C", 0o600),
		rename("b", "c"), read("c"), stat("c", false), mkdir("dir/sub"), rename("c", "dir"),
		rename("dir", "moved"), list("moved"), write("f", "F", 0o644), rename("moved", "f"),
		rename("moved", "moved/sub/inner"), rename("moved", "moved"), list(""),
	},
}

func TestMemSystemConformsToRealSystem(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("messages and symlinks follow Unix")
	}
	for name, steps := range conformance {
		t.Run(name, func(t *testing.T) {
			root := tempRoot(t)
			mem := NewMemSystem()
			if err := mem.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			real := run(t, NewRealSystem(RealSystemOptions{}), root, steps)
			if got := run(t, mem, root, steps); got != real {
				t.Errorf("MemSystem differs from RealSystem\n--- real\n%s--- mem\n%s", real, got)
			}
		})
	}
}

// run performs steps on sys and returns a transcript ending with the tree.
func run(t *testing.T, sys System, root AbsPath, steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		out, err := s.do(sys, root)
		fmt.Fprintf(&b, "%s: %q %s\n", s.name, out, describeErr(err, root))
	}
	return b.String() + dumpTree(t, sys, root)
}
