package snapshots

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// fsyncEnv makes every state write fsync the file and its folder when set
// to 1. It is off by default: a process crash cannot lose data already in
// the page cache, and fsyncing every saved blob makes large deploys take
// seconds. The journal is fsynced whatever it says.
const fsyncEnv = "AGENTPACK_FSYNC"

// Permissions of state written here: saved bytes may include secrets from
// adopted user files, so only the owner can read them.
const (
	dirPerm  fs.FileMode = 0o700
	filePerm fs.FileMode = 0o600
)

// stateSystem is the real disk as state writes see it, with fsync as
// AGENTPACK_FSYNC says.
func stateSystem() *fsys.RealSystem {
	return fsys.NewRealSystem(fsys.RealSystemOptions{Fsync: os.Getenv(fsyncEnv) == "1"})
}

// stateDirPath types a state directory given as a string, resolving a
// relative one against the working directory as the os calls it replaces
// did.
func stateDirPath(dir string) fsys.AbsPath {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return fsys.AbsPath(filepath.Clean(dir))
}

// checkID refuses ids that could name something outside the snapshots
// folder: empty, dot-prefixed, or holding a separator, "..", ':' or NUL.
func checkID(id string) error {
	if id == "" || strings.HasPrefix(id, ".") || strings.Contains(id, "..") ||
		strings.ContainsAny(id, "/\\:\x00") || strings.ContainsRune(id, filepath.Separator) {
		return apperr.New(apperr.InvalidArgument, "invalid snapshot id %q", id).
			WithHint("run `agentpack snapshots` to list snapshot ids").
			With("id", id)
	}
	return nil
}

// ioError puts what snapshots was doing in front of err, an error from a
// [fsys.System], keeping its code, hint and details; the OS cause ("no space
// left on device") ends the message, since the envelope shows the message
// and not the wrapped error.
func ioError(err error, format string, args ...any) *apperr.Error {
	code := apperr.IOFailed
	var in *apperr.Error
	if errors.As(err, &in) {
		code = in.Code
	}
	e := apperr.Wrap(err, code, format, args...)
	if in != nil {
		e.Hint = in.Hint
		for k, v := range in.Details {
			e = e.With(k, v)
		}
	}
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

// ensureDir creates dir and its missing parents with mode 0700 through sys,
// which makes the new entries durable when it fsyncs. An existing dir costs
// one stat and no fsync.
func ensureDir(sys fsys.System, dir fsys.AbsPath) error {
	if fi, err := sys.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	return sys.MkdirAll(dir, dirPerm)
}

// writeFile writes one state file atomically through sys with mode 0600,
// creating its folder with mode 0700 first: the System would make it 0755.
func writeFile(sys fsys.System, path fsys.AbsPath, data []byte) error {
	if err := ensureDir(sys, path.Dir()); err != nil {
		return err
	}
	return sys.WriteFile(path, data, filePerm)
}

// writeState writes one state file through s's System: fsynced, with its
// folder, only when that System fsyncs (AGENTPACK_FSYNC=1 for [NewStore]).
func (s *Store) writeState(path fsys.AbsPath, data []byte) error {
	return writeFile(s.sys, path, data)
}
