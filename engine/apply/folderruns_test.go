package apply

import (
	"testing"

	"github.com/agentpack/agentpack/snapshots"
)

func TestFolderRunsSplitWhereTheFolderChanges(t *testing.T) {
	var files []write
	for _, p := range []string{"/r/a/1", "/r/a/2", "/r/b/1", "/r/a/3", "/r/a/4", "/r/1"} {
		files = append(files, write{change: &snapshots.FileChange{Root: "/r", Path: p}})
	}
	runs := folderRuns(files)
	want := []int{0, 2, 3, 5, 6}
	if len(runs) != len(want) {
		t.Fatalf("runs = %v, want %v", runs, want)
	}
	for i := range want {
		if runs[i] != want[i] {
			t.Fatalf("runs = %v, want %v", runs, want)
		}
	}
	for r := 0; r+1 < len(runs); r++ {
		dir := files[runs[r]].path().Dir()
		for i := runs[r]; i < runs[r+1]; i++ {
			if got := files[i].path().Dir(); got != dir {
				t.Errorf("run %d mixes %s and %s", r, dir, got)
			}
		}
	}
	if got := folderRuns(nil); len(got) != 2 || got[0] != 0 || got[1] != 0 {
		t.Errorf("folderRuns(nil) = %v, want [0 0]", got)
	}
}
