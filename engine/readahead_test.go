package engine

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/fsys"
)

// readAhead gives each file's bytes in order, reads each file once when
// asked in order, and still answers when asked out of order or twice.
func TestReadAhead(t *testing.T) {
	mem := fsys.NewMemSystem()
	var reads atomic.Int64
	r := newReadAhead(CountReads{mem, &reads})
	const n = 100
	for i := range n {
		p := fsys.AbsPath(filepath.Join(string(filepath.Separator), "x", fmt.Sprint(i)))
		if err := mem.WriteFile(p, []byte(fmt.Sprint("file ", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		if k := r.add(p); k != i {
			t.Fatalf("add = %d, want %d", k, i)
		}
	}
	check := func(k int) {
		t.Helper()
		data, err := r.get(k)
		if err != nil || string(data) != fmt.Sprint("file ", k) {
			t.Fatalf("get(%d) = %q, %v", k, data, err)
		}
	}
	for k := range 50 {
		check(k)
	}
	if got := reads.Load(); got > 50+readAheadWindow+1 {
		t.Errorf("%d reads for 50 files asked in order, want each read once (plus the window ahead)", got)
	}
	check(10) // again: read on the spot
	check(70) // ahead: the ones skipped are let go of
	for k := 71; k < n; k++ {
		check(k)
	}
	check(60) // behind
	r.mu.Lock()
	left := len(r.ready)
	r.mu.Unlock()
	if left != 0 {
		t.Errorf("%d files held after the last was read", left)
	}
}

// gateSys holds every ReadFile until a second one has started: reads made
// one after the other never get past it.
type gateSys struct {
	fsys.System
	mu   sync.Mutex
	n    int
	both chan struct{}
}

func (s *gateSys) ReadFile(p fsys.AbsPath) ([]byte, error) {
	s.mu.Lock()
	if s.n++; s.n == 2 {
		close(s.both)
	}
	s.mu.Unlock()
	select {
	case <-s.both:
	case <-time.After(5 * time.Second):
		return nil, fmt.Errorf("no other read started beside the one of %s", p)
	}
	return s.System.ReadFile(p)
}

// The files after the one asked for are read on other goroutines while
// it is: the first get already has reads running side by side.
func TestReadAheadReadsAhead(t *testing.T) {
	mem := fsys.NewMemSystem()
	r := newReadAhead(&gateSys{System: mem, both: make(chan struct{})})
	for i := range 4 {
		p := fsys.AbsPath(filepath.Join(string(filepath.Separator), "x", fmt.Sprint(i)))
		if err := mem.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		r.add(p)
	}
	if _, err := r.get(0); err != nil {
		t.Fatal(err)
	}
}
