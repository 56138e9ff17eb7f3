package snapshots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

// childEnv, when set to a state dir, turns the test binary into a helper
// process that holds the lock of that dir until its stdin closes.
const (
	childEnv    = "AGENTPACK_SNAPSHOTS_TEST_LOCK_DIR"
	childCmdEnv = "AGENTPACK_SNAPSHOTS_TEST_LOCK_CMD"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(holdLock(dir, os.Getenv(childCmdEnv)))
	}
	os.Exit(m.Run())
}

func holdLock(dir, command string) int {
	release, err := Lock(context.Background(), dir, command, 10*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	release()
	return 0
}

// wantCode fails t unless err carries the apperr code want.
func wantCode(t testing.TB, err error, want apperr.Code) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", want)
	}
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != want {
		t.Fatalf("got error %v (code %s), want code %s", err, apperr.CodeOf(err), want)
	}
	return e
}
