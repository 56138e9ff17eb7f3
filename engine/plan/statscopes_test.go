package plan

import (
	"os"
	"slices"
	"testing"

	"github.com/agentpack/agentpack/internal/fsys"
)

// TestScopedStatCachesNameTheirRoots: each scope a plan saved is found
// again, scoped to its roots, by a writer that is not a plan; what it
// records there is what the scope's next plan loads. A folder whose roots
// file does not match its name is left out.
func TestScopedStatCachesNameTheirRoots(t *testing.T) {
	sys, state, files := statFixture(t, 2)
	a, b := files[0].Dir(), files[1].Dir()
	for _, root := range []fsys.AbsPath{a, b} {
		c := LoadStatCache(sys, state)
		c.Scope([]fsys.AbsPath{root})
		recordAll(t, sys, c, []fsys.AbsPath{files[slices.Index([]fsys.AbsPath{a, b}, root)]})
		c.Save()
	}
	// A folder named after no roots it names.
	odd := StatCachePath(state).JoinName(statScopesDir).JoinName("0123456789abcdef01234567")
	if err := os.MkdirAll(odd.String(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(odd.JoinName(statScopeRootsFile).String(), []byte(a), 0o600); err != nil {
		t.Fatal(err)
	}

	caches := LoadScopedStatCaches(sys, state)
	if len(caches) != 2 {
		t.Fatalf("%d scoped caches found, want the 2 plans saved", len(caches))
	}
	var covering *StatCache
	for _, c := range caches {
		if c.Covers(files[0]) {
			if covering != nil {
				t.Fatalf("two scopes cover %s", files[0])
			}
			covering = c
		}
	}
	if covering == nil || covering.Covers(files[1]) {
		t.Fatalf("no scope covers only %s", a)
	}
	fi, err := sys.Lstat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	covering.Forget(files[0])
	covering.Save()
	c := LoadStatCache(sys, state)
	c.Scope([]fsys.AbsPath{a})
	if _, ok := c.lookup(files[0], fsys.StatDataOf(fi)); ok {
		t.Fatalf("the scope's plan still vouches for %s, which a writer forgot in its scope", files[0])
	}
}

// TestScopedFolderListingsStayInTheirScope: a scope's folder listings are
// kept in its own folder, so listing one project's folders neither reads
// nor rewrites another's; each scope finds its own listings again.
func TestScopedFolderListingsStayInTheirScope(t *testing.T) {
	sys, state, files := statFixture(t, 2)
	a, b := files[0].Dir(), files[1].Dir()
	scoped := func(root fsys.AbsPath) *StatCache {
		c := LoadStatCache(sys, state)
		c.Scope([]fsys.AbsPath{root})
		return c
	}
	list := func(root fsys.AbsPath) {
		c := scoped(root)
		if _, err := ReadDirCached(sys, c, nil, root); err != nil {
			t.Fatal(err)
		}
		c.Save()
	}
	list(a)
	fileA := scoped(a).dirs.path
	before, err := os.ReadFile(fileA.String())
	if err != nil {
		t.Fatalf("scope a's listings: %v", err)
	}
	infoA, _ := os.Stat(fileA.String())
	list(b)
	fileB := scoped(b).dirs.path
	if fileB == fileA || fileB.Dir() == StatCachePath(state) {
		t.Fatalf("scope b's listings are kept at %s (a's at %s)", fileB, fileA)
	}
	if after, _ := os.ReadFile(fileA.String()); string(after) != string(before) {
		t.Fatal("listing b's folder rewrote scope a's listings")
	}
	if infoAfter, _ := os.Stat(fileA.String()); !infoAfter.ModTime().Equal(infoA.ModTime()) {
		t.Fatal("listing b's folder wrote scope a's listings again")
	}
	for _, root := range []fsys.AbsPath{a, b} {
		fi, _ := fsys.StatDataFollow(sys, root)
		if _, ok := scoped(root).dirs.get(sys, root, fi); !ok {
			t.Fatalf("the listing of %s was not found in its scope", root)
		}
	}
	fi, _ := fsys.StatDataFollow(sys, b)
	if _, ok := scoped(a).dirs.get(sys, b, fi); ok {
		t.Fatal("scope a holds b's listing")
	}
}
