package engine_test

import "os"

func symlink(oldname, newname string) error { return os.Symlink(oldname, newname) }
