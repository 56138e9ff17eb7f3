package fsys

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriteFile1k writes 1,000 new small files into 100 folders with
// RealSystem.WriteFile; BenchmarkPlainWrite1k is the floor: os.WriteFile of
// the same files, not atomic.
func BenchmarkWriteFile1k(b *testing.B) {
	sys := NewRealSystem(RealSystemOptions{})
	data := []byte("some skill text\n")
	for b.Loop() {
		root := b.TempDir()
		for i := range 1000 {
			p := AbsPath(filepath.Join(root, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%04d.md", i)))
			if err := sys.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkPlainWrite1k(b *testing.B) {
	data := []byte("some skill text\n")
	for b.Loop() {
		root := b.TempDir()
		for i := range 1000 {
			dir := filepath.Join(root, fmt.Sprintf("d%02d", i%100))
			if i < 100 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.md", i)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}
