package snapshots

import (
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data by writing a temporary file next to
// it and renaming it over path, so a reader never sees half a file. The file
// is fsynced only with AGENTPACK_FSYNC=1: a process crash cannot lose data
// already in the page cache, and fsyncing every saved blob would make large
// deploys take seconds (renameio always fsyncs, hence this small writer).
// durable forces the fsync whatever the setting.
func writeFileAtomic(path string, data []byte, perm os.FileMode, durable bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(data); err == nil && (durable || os.Getenv(fsyncEnv) == "1") {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
