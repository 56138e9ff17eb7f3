//go:build linux && (amd64 || arm64)

package fsys

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatat is unix.Fstatat(AT_FDCWD, path, st, flags) with path copied into
// a buffer on the stack when it fits, instead of a new one each call, and
// made as a raw system call where stats cannot block ([rawStats]).
func fstatat(path string, st *unix.Stat_t, flags int) error {
	var buf [512]byte
	if len(path) >= len(buf) || strings.IndexByte(path, 0) >= 0 {
		return unix.Fstatat(unix.AT_FDCWD, path, st, flags)
	}
	copy(buf[:], path) // buf[len(path)] is the 0 that ends it
	cwd, call := unix.AT_FDCWD, unix.Syscall6
	if rawStats() {
		call = unix.RawSyscall6
	}
	_, _, errno := call(sysFstatat, uintptr(cwd), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
