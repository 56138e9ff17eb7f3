package fsys

import (
	"runtime"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestCheckBeneath(t *testing.T) {
	base := tempRoot(t)
	root, outside, rootLink := base.JoinName("root"), base.JoinName("outside"), base.JoinName("root-link")
	// The same tree on disk and in memory: CheckBeneath must judge both alike.
	build := func(sys System) System {
		must := func(err error) {
			if err != nil {
				t.Skipf("cannot build the tree: %v", err)
			}
		}
		must(sys.MkdirAll(root.Join("real/sub"), 0o755))
		must(sys.MkdirAll(outside, 0o755))
		must(sys.WriteFile(root.Join("real/sub/file.md"), nil, 0o644))
		must(sys.Symlink(outside.String(), root.JoinName("linked")))
		must(sys.Symlink(outside.String(), root.Join("real/sub/deep")))
		must(sys.Symlink(outside.JoinName("file.md").String(), root.Join("real/file-link.md")))
		must(sys.Symlink(root.JoinName("nowhere").String(), root.JoinName("dangling")))
		must(sys.Symlink(root.String(), rootLink))
		return sys
	}
	systems := map[string]System{"real": build(NewRealSystem(RealSystemOptions{})), "mem": build(NewMemSystem())}

	const folderLink, fileLink, outsideRoot = "is a symlink inside the managed folder", "is a symlink where agentpack manages a file", "is outside"
	for _, tt := range []struct {
		name       string
		root, path AbsPath
		want       string // "" for allowed, else part of the message
		link       AbsPath
	}{
		{"existing file", root, root.Join("real/sub/file.md"), "", ""},
		{"missing folders", root, root.Join("real/sub/new/deeper.md"), "", ""},
		{"file where a folder should be", root, root.Join("real/sub/file.md/x"), "", ""},
		{"the root itself", root, root, "", ""},
		{"root is a link", rootLink, rootLink.Join("real/sub/file.md"), "", ""},
		{"first folder is a link", root, root.Join("linked/x.md"), folderLink, root.JoinName("linked")},
		{"deep folder is a link", root, root.Join("real/sub/deep/a/b.md"), folderLink, root.Join("real/sub/deep")},
		{"link below a linked root", rootLink, rootLink.Join("linked/x.md"), folderLink, rootLink.JoinName("linked")},
		{"final file is a link", root, root.Join("real/file-link.md"), fileLink, root.Join("real/file-link.md")},
		{"dangling final link", root, root.JoinName("dangling"), fileLink, root.JoinName("dangling")},
		{"dangling folder link", root, root.Join("dangling/x"), folderLink, root.JoinName("dangling")},
		{"outside the root", root, outside.JoinName("x"), outsideRoot, ""},
		{"sibling sharing a prefix", root, base.Join("rootx/y"), outsideRoot, ""},
		{"parent of the root", root, base, outsideRoot, ""},
	} {
		for sysName, sys := range systems {
			t.Run(sysName+"/"+tt.name, func(t *testing.T) {
				checkBeneathCase(t, CheckBeneath(sys, tt.root, tt.path), tt.root, tt.path, tt.link, tt.want)
			})
		}
	}
}

func checkBeneathCase(t *testing.T, err error, root, path, link AbsPath, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("CheckBeneath = %v, want nil", err)
		}
		return
	}
	ae := apperr.As(err)
	if err == nil || ae.Code != apperr.IOInvalidPath || !strings.Contains(ae.Message, want) {
		t.Fatalf("CheckBeneath = %v, want E_IO_INVALID_PATH %q", err, want)
	}
	if ae.Details["path"] != path.String() || ae.Details["root_posix"] != root.ToSlash() {
		t.Errorf("details = %v", ae.Details)
	}
	if link != "" && (ae.Details["link"] != link.String() || ae.Details["link_posix"] != link.ToSlash()) {
		t.Errorf("details link = %v, want %s", ae.Details["link"], link)
	}
}

func TestCheckBeneathMessage(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the message uses Unix paths")
	}
	sys, root := NewMemSystem(), AbsPath("/home/me/.claude")
	if err := sys.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sys.Symlink("/elsewhere", root.JoinName("agents")); err != nil {
		t.Fatal(err)
	}
	err := CheckBeneath(sys, root, root.Join("agents/reviewer.md"))
	want := "/home/me/.claude/agents is a symlink inside the managed folder /home/me/.claude; " +
		"agentpack never reads, writes or deletes through a linked folder"
	if got := apperr.As(err).Message; got != want {
		t.Errorf("message = %q\nwant      %q", got, want)
	}
}
