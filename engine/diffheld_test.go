package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestDiffHoldsBoundedBytes: a cold diff over more source bytes than it
// may hold loads the rest as hashes, lets go of the bytes of created
// files past its budget and reads them again when shown, and shows
// exactly the diff it shows when it holds them all.
func TestDiffHoldsBoundedBytes(t *testing.T) {
	repo := benchRepo(t, 30, 5) // 150 files of ~1 KB
	env := testEnv(t)
	diff := func(held int64) (string, int64, int64) {
		t.Helper()
		defer engine.SetDiffHeld(held)()
		var reads atomic.Int64
		e := engine.New(env, targets.NewSet())
		e.Sys = engine.CountReads{e.Sys, &reads}
		_, d, err := e.Diff(context.Background(), engine.Request{Repo: repo})
		if err != nil {
			t.Fatal(err)
		}
		loaded := reads.Load()
		var out strings.Builder
		for _, c := range d.Changes {
			out.WriteString(c.Path.String() + "\n" + c.Unified.String())
		}
		if len(d.Changes) != 150 {
			t.Fatalf("%d changes, want 150", len(d.Changes))
		}
		return out.String(), loaded, reads.Load() - loaded
	}
	all, allReads, allShown := diff(1 << 30)
	some, someReads, someShown := diff(8 << 10)
	if some != all {
		t.Fatal("a diff holding few bytes shows another diff than one holding them all")
	}
	// Past the budget, files are hashed at load (the shape of their diff
	// taken then) and read again only when shown, never in between. How
	// many modules load their bytes before the budget is spent depends on
	// how many load at once (the main files are always held), so the
	// count shown is bounded, not exact.
	if someReads != allReads || allShown != 0 || someShown < 50 {
		t.Fatalf("holding 8 KiB, the diff read %d files and %d more to show them; holding all, %d and %d: the budget was not applied, or files were read between",
			someReads, someShown, allReads, allShown)
	}
}
