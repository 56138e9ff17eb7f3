//go:build !windows

package snapshots

import "os"

// syncDir fsyncs a directory so a rename or removal inside it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
