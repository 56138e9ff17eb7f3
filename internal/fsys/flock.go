package fsys

import "github.com/gofrs/flock"

// TryLock tries once, without waiting, to take the exclusive advisory lock
// (flock on Unix, LockFileEx on Windows) of the file path, creating the file
// with mode 0600 when it is missing; its folder must exist. ok is false when
// another open file description holds the lock: another process, or another
// TryLock in this one, since each call opens the file anew. unlock releases
// the lock and closes the file. The file itself stays: removing a lock file
// lets two processes lock two different inodes.
//
// A lock is not a [System] call because it guards the real disk against
// other processes; a MemSystem or a dry run has nothing to guard.
func TryLock(path AbsPath) (unlock func() error, ok bool, err error) {
	fl := flock.New(string(path))
	ok, err = fl.TryLock()
	if err != nil {
		return nil, false, IOError(err, "lock", path)
	}
	if !ok {
		return nil, false, nil
	}
	return func() error { return IOError(fl.Unlock(), "unlock", path) }, true, nil
}
