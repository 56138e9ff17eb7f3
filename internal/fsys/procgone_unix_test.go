//go:build unix

package fsys

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSweepMarkersRemovesOnlyThoseOfGoneProcesses: a marker folder left by
// a watcher whose process is gone goes; one of a live process, one holding
// anything but markers, and one of the old name without a process id stay.
func TestSweepMarkersRemovesOnlyThoseOfGoneProcesses(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	gone := strconv.Itoa(cmd.Process.Pid)
	if !processGone(cmd.Process.Pid) {
		t.Skip("the process id was taken again")
	}
	tmp := t.TempDir()
	folder := func(name string, files ...string) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	stale := folder(markerPrefix+gone+"-1", "1", "7")
	keep := []string{
		folder(markerPrefix + strconv.Itoa(os.Getpid()) + "-2"),
		folder(markerPrefix + strconv.Itoa(os.Getppid()) + "-3"),
		folder(markerPrefix+gone+"-4", "3", "notes.txt"),
		folder(markerPrefix + "123456789"),
	}
	sweepMarkers(tmp)
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the folder of a gone process is still there: %v", err)
	}
	for _, dir := range keep {
		if _, err := os.Lstat(dir); err != nil {
			t.Errorf("%s was removed", filepath.Base(dir))
		}
	}
	if _, err := os.Lstat(filepath.Join(keep[2], "notes.txt")); err != nil {
		t.Errorf("a file that is not a marker was removed")
	}
}
