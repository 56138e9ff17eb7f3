//go:build linux

package fsys

import "golang.org/x/sys/unix"

const sysFstatat = unix.SYS_FSTATAT
