package snapshots

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func TestSaveBlobReadBlob(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	data := []byte("hello\n")
	got, err := s.SaveBlob(id, data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("SaveBlob = %s, want %s", got, want)
	}
	path := filepath.Join(s.Dir(), "snapshots", id, got)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Fatalf("blob mode = %v, want 0600", info.Mode().Perm())
	}
	back, err := s.ReadBlob(id, got)
	if err != nil || string(back) != string(data) {
		t.Fatalf("ReadBlob = %q, %v", back, err)
	}

	// Saving the same bytes again does not rewrite the file.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if again, err := s.SaveBlob(id, data); err != nil || again != got {
		t.Fatalf("second SaveBlob = %s, %v", again, err)
	}
	if info, _ := os.Stat(path); !info.ModTime().Equal(old) {
		t.Fatal("SaveBlob rewrote an identical blob")
	}

	// Empty content is a valid blob.
	empty, err := s.SaveBlob(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.ReadBlob(id, empty); err != nil || len(b) != 0 {
		t.Fatalf("ReadBlob(empty) = %q, %v", b, err)
	}
}

func TestReadBlobDetectsDamage(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	sha, err := s.SaveBlob(id, []byte("original"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), "snapshots", id, sha)
	if err := os.WriteFile(path, []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.ReadBlob(id, sha)
	e := wantCode(t, err, apperr.SnapshotCorrupted)
	if e.Hint == "" || e.Details["id"] != id || e.Details["sha256"] != sha {
		t.Fatalf("damaged blob error lacks hint or details: %+v", e)
	}

	// SaveBlob repairs a damaged blob it is asked to save again.
	if _, err := s.SaveBlob(id, []byte("original")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadBlob(id, sha); err != nil {
		t.Fatalf("after re-save: %v", err)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = s.ReadBlob(id, sha)
	if e := wantCode(t, err, apperr.SnapshotCorrupted); e.Hint == "" {
		t.Fatal("missing blob error has no hint")
	}
	_, err = s.ReadBlob("20990101T000000.000000000Z", sha)
	wantCode(t, err, apperr.SnapshotCorrupted)
	_, err = s.ReadBlob(id, "../../journal.json")
	wantCode(t, err, apperr.SnapshotCorrupted)
	_, err = s.ReadBlob("../x", sha)
	wantCode(t, err, apperr.InvalidArgument)
	_, err = s.SaveBlob("a/b", nil)
	wantCode(t, err, apperr.InvalidArgument)
}

func TestDeleteBlobs(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	if _, err := s.SaveBlob(id, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBlobs(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "snapshots", id)); !os.IsNotExist(err) {
		t.Fatalf("blob folder still there: %v", err)
	}
	if err := s.DeleteBlobs(id); err != nil {
		t.Fatalf("second DeleteBlobs: %v", err)
	}
	wantCode(t, s.DeleteBlobs(".."), apperr.InvalidArgument)
}

func BenchmarkSaveBlobs(b *testing.B) {
	s := NewStore(b.TempDir())
	blobs := make([][]byte, 10000)
	for i := range blobs {
		blobs[i] = fmt.Appendf(nil, "# skill %d\n\nsmall file body number %d\n", i, i)
	}
	for b.Loop() {
		id := s.NewID(time.Now())
		for _, data := range blobs {
			if _, err := s.SaveBlob(id, data); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(blobs)), "ns/blob")
}

// readCounter counts the files read whole through it, by name.
type readCounter struct {
	fsys.System
	mu    sync.Mutex
	reads map[string]int
}

func (c *readCounter) ReadFile(p fsys.AbsPath) ([]byte, error) {
	c.mu.Lock()
	c.reads[p.Base()]++
	c.mu.Unlock()
	return c.System.ReadFile(p)
}

// TestReadBlobReadsThePackFirst: the bytes of a packed snapshot, read in
// parallel as a rollback reads them, come from the pack without trying a
// loose file per blob, and its index is parsed at most twice (once to
// read one blob, again to keep it), not once per reader.
func TestReadBlobReadsThePackFirst(t *testing.T) {
	sys := &readCounter{System: fsys.NewRealSystem(fsys.RealSystemOptions{}), reads: map[string]int{}}
	s := NewStoreOn(sys, fsys.AbsPath(t.TempDir()))
	id := s.NewID(time.Now())
	var datas [][]byte
	for i := range 200 {
		datas = append(datas, []byte(fmt.Sprintf("blob %d\n", i)))
	}
	shas, err := s.SavePack(id, datas)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, sha := range shas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := s.ReadBlob(id, sha); err != nil || string(got) != string(datas[i]) {
				t.Errorf("ReadBlob(%s) = %q, %v", sha, got, err)
			}
		}()
	}
	wg.Wait()
	for name, n := range sys.reads {
		switch {
		case name == packName+".idx" && n > 2:
			t.Errorf("the pack's index was read %d times", n)
		case isSHA256(name):
			t.Errorf("a loose file %s was tried %d times before the pack", name, n)
		}
	}
	if sys.reads[packName+".idx"] == 0 {
		t.Error("the pack's index was never read")
	}
}
