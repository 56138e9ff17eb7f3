package local

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func archiveOf(t *testing.T, name, version string) ([]byte, *aampkg.Manifest) {
	t.Helper()
	manifest := fmt.Sprintf("name: %s\nversion: %s\ndescription: d\nartifacts:\n  skills:\n    - name: s\n      path: skills/s\n", name, version)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, body string }{{"aam.yaml", manifest}, {"skills/s/SKILL.md", "x"}} {
		_ = tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte(f.body))
	}
	_ = tw.Close()
	_ = zw.Close()
	a, err := aampkg.Extract(buf.Bytes(), aampkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), a.Manifest
}

// Publishers running at once all land in the index (the registry lock),
// a version is stored once, and a changed archive is a checksum mismatch.
func TestPublishConcurrentlyAndVerify(t *testing.T) {
	root := fsys.AbsPath(t.TempDir())
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	if err := Init(sys, root, "team", time.Now()); err != nil {
		t.Fatal(err)
	}
	r, err := Open(registry.Config{Name: "team", URL: root.String(), Type: Type}, sys)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, m := archiveOf(t, fmt.Sprintf("p%d", i), "1.0.0")
			_, errs[i] = r.Publish(ctx, data, m, "")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("publisher %d: %v", i, err)
		}
	}
	idx, err := r.Index(ctx)
	if err != nil || len(idx) != 8 {
		t.Fatalf("index has %d entries (%v), want 8", len(idx), err)
	}
	data, m := archiveOf(t, "p0", "1.0.0")
	if _, err := r.Publish(ctx, data, m, ""); apperr.CodeOf(err) != apperr.PackageVersionExists {
		t.Fatalf("republish: %v", err)
	}
	if _, _, err := r.Download(ctx, "p0", "latest"); err != nil {
		t.Fatal(err)
	}
	p := root.JoinName("packages").JoinName("p0").JoinName("versions").JoinName("1.0.0.aam")
	if err := sys.WriteFile(p, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Download(ctx, "p0", "1.0.0"); apperr.CodeOf(err) != apperr.ChecksumMismatch {
		t.Fatalf("a changed archive: %v", err)
	}
	if _, err := r.Package(ctx, "nope"); apperr.CodeOf(err) != apperr.PackageNotFound {
		t.Fatalf("unknown package: %v", err)
	}
}
