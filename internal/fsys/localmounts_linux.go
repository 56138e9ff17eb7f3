//go:build linux && (amd64 || arm64)

package fsys

import (
	"bytes"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// A stat is made as a raw system call (no word to Go's scheduler that the
// thread is in the kernel) where it cannot wait on anything but the local
// disk. Go's monitor thread otherwise wakes every 20 µs while stats are
// under way and hands a processor off when one seems slow: a status of
// 10,000 deployed files makes 24,000 stats, and on a 2-CPU VM those wakes
// and hand-offs took 5-10% of its time. A raw call that blocked (a network
// file system whose server is gone) would hold its processor, and the
// collector and the signal handler with it; so stats are raw only on a
// machine whose every mount, but the kernel's own under /proc, /sys and
// /dev, is a local file system: no path, whatever links it goes through,
// reaches one that could block. The mount table is read again at most
// once a second, so that a process that runs for days (the MCP server)
// sees a network share mounted after it started.
var rawStats = func() bool {
	now := time.Now().UnixNano()
	if d := mounts.Load(); d != nil && now < d.until {
		return d.local
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	d := &mountLook{local: err == nil && onlyLocalMounts(data), until: now + int64(time.Second)}
	mounts.Store(d)
	return d.local
}

// mounts is the last look at the mount table.
var mounts atomic.Pointer[mountLook]

// mountLook is what a look at the mount table found: whether every mount
// is local, and until when that is taken as still true.
type mountLook struct {
	local bool
	until int64
}

// localTypes are the file systems whose stats never wait on a network or
// another process: disks, memory and the kernel's own.
var localTypes = map[string]bool{
	"ext2": true, "ext3": true, "ext4": true, "xfs": true, "btrfs": true, "f2fs": true, "zfs": true,
	"bcachefs": true, "jfs": true, "reiserfs": true, "nilfs2": true, "overlay": true, "tmpfs": true,
	"ramfs": true, "devtmpfs": true, "squashfs": true, "erofs": true, "iso9660": true, "udf": true,
	"vfat": true, "msdos": true, "exfat": true, "ntfs3": true, "hfsplus": true,
	"proc": true, "sysfs": true, "cgroup": true, "cgroup2": true, "devpts": true, "mqueue": true,
	"debugfs": true, "tracefs": true, "securityfs": true, "pstore": true, "bpf": true,
	"hugetlbfs": true, "configfs": true, "fusectl": true, "binfmt_misc": true, "efivarfs": true,
	"selinuxfs": true, "nsfs": true,
}

// kernelDirs hold the kernel's own mounts (an automount of binfmt_misc
// under /proc/sys among them), which no path agentpack reads leads into.
var kernelDirs = []string{"/proc", "/sys", "/dev"}

// onlyLocalMounts reports whether the mount table data (the format of
// /proc/self/mountinfo) has only local file systems outside kernelDirs.
// A line it cannot read counts as a mount that is not local.
func onlyLocalMounts(data []byte) bool {
	lines := 0
	for line := range bytes.Lines(data) {
		fields := strings.Fields(string(line))
		sep := -1
		for i := 6; i < len(fields); i++ { // optional fields end with "-"
			if fields[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(fields) {
			return false
		}
		lines++
		if localTypes[fields[sep+1]] || underKernelDir(fields[4]) {
			continue
		}
		return false
	}
	return lines > 0
}

// underKernelDir reports whether the mount point m (as mountinfo escapes
// it) is one of kernelDirs or below one.
func underKernelDir(m string) bool {
	for _, d := range kernelDirs {
		if m == d || strings.HasPrefix(m, d+"/") {
			return true
		}
	}
	return false
}
