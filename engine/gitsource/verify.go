package gitsource

import (
	"errors"
	"io/fs"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// VerifySubdir is [Cache.VerifySubdir] on the real filesystem.
func VerifySubdir(dir, subdir string, want []lockfile.File) error {
	return (&Cache{}).VerifySubdir(dir, subdir, want)
}

// VerifySubdir checks, reading through c's System, that the files under
// subdir of the checkout dir (an absolute path) are exactly want (a locked
// module's file manifest). A difference is E_CHECKSUM_MISMATCH naming the
// first differing file (in path order) and whether it is missing,
// unexpected or modified; a missing subdir is a mismatch too. Called after
// [Cache.Dir] has verified the checkout, a mismatch means the lockfile and
// the commit disagree; only a checkout whose files and marker were both
// rewritten escapes Dir, and [Cache.Repair] replaces that one.
func (c *Cache) VerifySubdir(dir, subdir string, want []lockfile.File) error {
	sub, err := CleanSubdir(subdir)
	if err != nil {
		return err
	}
	base, err := fsys.NewAbsPath(dir)
	if err != nil {
		return err
	}
	root := base
	if sub != "" {
		rel, err := fsys.NewRelPath(sub)
		if err != nil {
			return err
		}
		root = base.Join(rel)
	}
	got, err := hashTree(c.sys(), root)
	if errors.Is(err, fs.ErrNotExist) {
		return apperr.Wrap(err, apperr.ChecksumMismatch, "module folder %q is missing from %s", sub, dir).
			WithHint("the source no longer has this path; run `agentpack lock` to re-pin the module").
			With("path", root.String()).With("subdir", sub)
	}
	if err != nil {
		return err
	}
	if lockfile.ModuleHash(got) == lockfile.ModuleHash(want) {
		return nil
	}
	path, reason, exp, act := firstDifference(lockfile.SortFiles(want), got)
	return apperr.New(apperr.ChecksumMismatch, "%s in %s does not match the lockfile: %s", path, root, reason).
		WithHint("run `agentpack lock` to accept the new content").With("checkout", dir).
		With("path", path).With("subdir", sub).With("reason", reason).
		With("expected_sha256", exp).With("actual_sha256", act)
}

// firstDifference merges two path-sorted manifests and describes the first
// entry that differs.
func firstDifference(want, got []lockfile.File) (path, reason, expected, actual string) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || i < len(want) && want[i].Path < got[j].Path:
			return want[i].Path, "missing", want[i].SHA256, ""
		case i == len(want) || got[j].Path < want[i].Path:
			return got[j].Path, "unexpected", "", got[j].SHA256
		case want[i] != got[j]:
			return want[i].Path, "modified", want[i].SHA256, got[j].SHA256
		}
		i, j = i+1, j+1
	}
	return "", "module hash differs", "", ""
}
