//go:build linux && (amd64 || arm64)

package fsys

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Stats are raw only where every mount outside the kernel's own folders
// is a local file system; anything else in the table, or a table that
// cannot be read, keeps them ordinary system calls.
func TestOnlyLocalMounts(t *testing.T) {
	const base = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:21 / /proc rw,nosuid - proc proc rw
24 22 0:22 / /sys rw,nosuid shared:2 - sysfs sysfs rw
25 24 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw
26 22 0:5 / /dev rw shared:3 - devtmpfs udev rw,size=8M
27 22 0:24 / /dev/shm rw - tmpfs tmpfs rw
28 23 0:25 / /proc/sys/fs/binfmt_misc rw,relatime shared:9 - autofs systemd-1 rw,fd=30
29 22 0:26 / /home/user/my\040dir rw - xfs /dev/sdb1 rw
`
	cases := []struct {
		name, table string
		want        bool
	}{
		{"local disks, the kernel's own and an automount under /proc", base, true},
		{"an NFS home", base + "40 22 0:40 / /home rw - nfs4 server:/home rw\n", false},
		{"a FUSE mount under /run", base + "41 22 0:41 / /run/user/1000/gvfs rw - fuse.gvfsd-fuse gvfsd-fuse rw\n", false},
		{"an automount outside the kernel's folders", base + "42 22 0:42 / /net rw - autofs -hosts rw\n", false},
		{"a folder named like a kernel one", base + "43 22 0:43 / /devices rw - cifs //srv/share rw\n", false},
		{"a line without its separator", base + "44 22 0:44 / /mnt rw ext4\n", false},
		{"an empty table", "", false},
	}
	for _, c := range cases {
		if got := onlyLocalMounts([]byte(c.table)); got != c.want {
			t.Errorf("%s: onlyLocalMounts = %v, want %v", c.name, got, c.want)
		}
	}
}

// fstatat tells the same, raw or not: a file, a folder, a link not
// followed and followed, a missing path, a name too long for its buffer.
func TestFstatatRawOrNot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("body"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l")
	if err := os.Symlink("f", link); err != nil {
		t.Fatal(err)
	}
	long := dir + strings.Repeat("/x", 300) // past the stack buffer
	was := rawStats
	t.Cleanup(func() { rawStats = was })
	for _, raw := range []bool{false, true} {
		rawStats = func() bool { return raw }
		for _, c := range []struct {
			path  string
			flags int
		}{{file, unix.AT_SYMLINK_NOFOLLOW}, {dir, unix.AT_SYMLINK_NOFOLLOW}, {link, unix.AT_SYMLINK_NOFOLLOW}, {link, 0}, {filepath.Join(dir, "missing"), 0}, {long, 0}} {
			var got, want unix.Stat_t
			err := fstatat(c.path, &got, c.flags)
			werr := unix.Fstatat(unix.AT_FDCWD, c.path, &want, c.flags)
			if !errors.Is(err, werr) && (err != nil || werr != nil) {
				t.Errorf("raw %v, %s: error %v, want %v", raw, c.path, err, werr)
			}
			if got.Ino != want.Ino || got.Mode != want.Mode || got.Size != want.Size {
				t.Errorf("raw %v, %s: %+v, want %+v", raw, c.path, got, want)
			}
		}
	}
}

// The mount table is looked at again once the last look is a second
// old, and not before.
func TestRawStatsLooksAgainAfterASecond(t *testing.T) {
	was := mounts.Load()
	t.Cleanup(func() { mounts.Store(was) })
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skip("no mount table here:", err)
	}
	now := onlyLocalMounts(data)
	mounts.Store(&mountLook{local: !now, until: time.Now().Add(time.Minute).UnixNano()})
	if got := rawStats(); got != !now {
		t.Errorf("within the second: %v, want the last look's %v", got, !now)
	}
	mounts.Store(&mountLook{local: !now, until: time.Now().Add(-time.Millisecond).UnixNano()})
	if got := rawStats(); got != now {
		t.Errorf("after the second: %v, want the table's %v", got, now)
	}
	if d := mounts.Load(); d == nil || d.local != now || d.until <= time.Now().UnixNano() {
		t.Errorf("the new look was not kept: %+v", d)
	}
}
