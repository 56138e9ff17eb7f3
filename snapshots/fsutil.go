package snapshots

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
)

// fsyncEnv turns on directory fsyncs after every state write when set to 1.
const fsyncEnv = "AGENTPACK_FSYNC"

// Permissions of state written here: saved bytes may include secrets from
// adopted user files, so only the owner can read them.
const (
	dirPerm  os.FileMode = 0o700
	filePerm os.FileMode = 0o600
)

// checkID refuses ids that could name something outside the snapshots
// folder: empty, dot-prefixed, or holding a separator, "..", ':' or NUL.
func checkID(id string) error {
	if id == "" || strings.HasPrefix(id, ".") || strings.Contains(id, "..") ||
		strings.ContainsAny(id, "/\\:\x00") || strings.ContainsRune(id, os.PathSeparator) {
		return apperr.New(apperr.InvalidArgument, "invalid snapshot id %q", id).
			WithHint("run `agentpack snapshots` to list snapshot ids").
			With("id", id)
	}
	return nil
}

// ioError turns an OS error into an apperr with a code that says why.
func ioError(err error, format string, args ...any) *apperr.Error {
	code := apperr.IOFailed
	switch {
	case errors.Is(err, fs.ErrPermission):
		code = apperr.IOPermissionDenied
	case errors.Is(err, os.ErrInvalid):
		code = apperr.IOInvalidPath
	}
	e := apperr.Wrap(err, code, format, args...)
	// The OS cause ("no space left on device") belongs in the message: the
	// envelope shows the message, not the wrapped error.
	if cause := osCause(err); cause != "" {
		e.Message += ": " + cause
		e = e.With("cause", cause)
	}
	return e
}

// osCause is the innermost error text of err (the errno's words).
func osCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			if err == nil {
				return ""
			}
			return err.Error()
		}
		err = next
	}
}

// writeState writes one state file atomically, creating its folder, and
// fsyncs the folder when AGENTPACK_FSYNC=1.
func writeState(path string, data []byte) error {
	return writeStateSync(path, data, false)
}

// writeStateSync is writeState that, when durable, fsyncs the file and its
// folder whatever AGENTPACK_FSYNC says: the journal must survive a power cut
// that the target files it protects might not.
func writeStateSync(path string, data []byte, durable bool) error {
	dir := filepath.Dir(path)
	if err := ensureDir(dir); err != nil {
		return err
	}
	if err := writeFileAtomic(path, data, filePerm, durable); err != nil {
		return ioError(err, "cannot write %s", path)
	}
	if durable {
		if err := syncDir(dir); err != nil {
			return ioError(err, "cannot sync %s", dir)
		}
		return nil
	}
	return maybeSyncDir(dir)
}

// removeState removes one state file (absent is fine) and fsyncs its folder
// when AGENTPACK_FSYNC=1.
func removeState(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ioError(err, "cannot remove %s", path)
	}
	return maybeSyncDir(filepath.Dir(path))
}

// ensureDir creates dir (and its parents) when missing; with
// AGENTPACK_FSYNC=1 it also fsyncs the parent so the new entry is durable.
func ensureDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return ioError(err, "cannot create %s", dir)
	}
	return maybeSyncDir(filepath.Dir(dir))
}

// maybeSyncDir fsyncs dir when AGENTPACK_FSYNC=1.
func maybeSyncDir(dir string) error {
	if os.Getenv(fsyncEnv) != "1" {
		return nil
	}
	if err := syncDir(dir); err != nil {
		return ioError(err, "cannot sync %s", dir)
	}
	return nil
}
