package snapshots

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestLockTimesOutNamingTheHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state") // Lock creates it
	release, err := Lock(context.Background(), dir, "deploy --apply", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ReadHolder(dir)
	if err != nil || h == nil || h.PID != os.Getpid() || h.Command != "deploy --apply" || h.Since.IsZero() {
		t.Fatalf("ReadHolder = %+v, %v", h, err)
	}

	start := time.Now()
	_, err = Lock(context.Background(), dir, "rollback --last", 300*time.Millisecond)
	e := wantCode(t, err, apperr.Locked)
	if waited := time.Since(start); waited < 300*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("Lock waited %v, want about 300ms", waited)
	}
	wantMsg := fmt.Sprintf("another agentpack (pid %d, `deploy --apply`) holds the lock", os.Getpid())
	if e.Message != wantMsg {
		t.Fatalf("message = %q, want %q", e.Message, wantMsg)
	}
	if e.Details["pid"] != os.Getpid() || e.Details["command"] != "deploy --apply" || e.Details["since"] == nil || e.Hint == "" {
		t.Fatalf("details/hint = %v / %q", e.Details, e.Hint)
	}

	// timeout 0 tries once.
	_, err = Lock(context.Background(), dir, "x", 0)
	wantCode(t, err, apperr.Locked)

	// A cancelled context stops the wait early.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start = time.Now()
	_, err = Lock(ctx, dir, "x", time.Minute)
	wantCode(t, err, apperr.Locked)
	if time.Since(start) > 5*time.Second {
		t.Fatal("Lock ignored the cancelled context")
	}

	release()
	release() // safe twice
	if h, _ := ReadHolder(dir); h != nil {
		t.Fatalf("lock.holder still names %+v after release", h)
	}
	again, err := Lock(context.Background(), dir, "rollback --last", 300*time.Millisecond)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	if h, _ := ReadHolder(dir); h == nil || h.Command != "rollback --last" {
		t.Fatalf("holder = %+v, want the new command", h)
	}
	again()
}

func TestLockExcludesGoroutines(t *testing.T) {
	dir := t.TempDir()
	var inside, done atomic.Int32
	var overlap atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := Lock(context.Background(), dir, fmt.Sprint("worker ", i), 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			if inside.Add(1) > 1 {
				overlap.Store(true)
			}
			time.Sleep(10 * time.Millisecond)
			inside.Add(-1)
			done.Add(1)
			release()
		}()
	}
	wg.Wait()
	if overlap.Load() || done.Load() != 8 {
		t.Fatalf("overlap = %v, %d of 8 finished; want no overlap and all done", overlap.Load(), done.Load())
	}
}

// startHolder re-executes the test binary as a process that holds the lock
// of dir (see TestMain) and returns once it has it.
func startHolder(t *testing.T, dir, command string) (*exec.Cmd, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+dir, childCmdEnv+"="+command)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper did not take the lock: %q, %v", line, err)
	}
	return cmd, func() { stdin.Close() }
}

func TestLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	child, letGo := startHolder(t, dir, "deploy --apply")

	_, err := Lock(context.Background(), dir, "status", 300*time.Millisecond)
	e := wantCode(t, err, apperr.Locked)
	if e.Details["pid"] != child.Process.Pid || e.Details["command"] != "deploy --apply" {
		t.Fatalf("details = %v, want the helper's pid %d", e.Details, child.Process.Pid)
	}
	if !strings.Contains(e.Message, fmt.Sprintf("pid %d", child.Process.Pid)) {
		t.Fatalf("message %q does not name the helper's pid", e.Message)
	}

	letGo()
	release, err := Lock(context.Background(), dir, "status", 10*time.Second)
	if err != nil {
		t.Fatalf("Lock after the helper released: %v", err)
	}
	release()
	if err := child.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
}

func TestLockFreedWhenHolderDies(t *testing.T) {
	dir := t.TempDir()
	child, _ := startHolder(t, dir, "deploy --apply")
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	// The kernel dropped the flock; the stale lock.holder does not block.
	release, err := Lock(context.Background(), dir, "rollback", 10*time.Second)
	if err != nil {
		t.Fatalf("Lock after the holder died: %v", err)
	}
	defer release()
	if h, _ := ReadHolder(dir); h == nil || h.PID != os.Getpid() {
		t.Fatalf("holder = %+v, want this process", h)
	}
}
