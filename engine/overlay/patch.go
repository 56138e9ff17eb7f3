package overlay

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/textdiff"
	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// patchTarget is the module file a patch file changes:
// ".agentpack/patches/skills/x.md.patch" changes "skills/x.md".
func patchTarget(patchRel string) string {
	return strings.TrimSuffix(patchRel, ".patch")
}

// applyPatch applies the one-file unified diff patch to data.
func applyPatch(dir fsys.AbsPath, scope Scope, moduleID, rel string, patch, data []byte) ([]byte, error) {
	fail := func(format string, args ...any) error {
		return apperr.New(apperr.OverlayPatchApplyFailed, "module %s (%s overlay): patch for %s: "+format,
			append([]any{moduleID, scope, rel}, args...)...).
			WithHint("rewrite .agentpack/patches/%s.patch against the current upstream file (or run `agentpack overlay rebase %s --scope %s`)", rel, moduleID, scope).
			With("module_id", moduleID).With("scope", string(scope)).With("overlay_dir", dir.String()).With("path", rel)
	}
	if !utf8.Valid(data) {
		return nil, fail("patch overlays change UTF-8 text files only; use a dir overlay for this file")
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(patch))
	if err != nil {
		return nil, fail("cannot parse the patch: %v", err)
	}
	if len(files) != 1 {
		return nil, fail("a patch file holds a diff of exactly one file, this one has %d", len(files))
	}
	f := files[0]
	if f.IsBinary || f.IsDelete || f.IsNew || f.IsRename || f.IsCopy {
		return nil, fail("only edits of an existing text file can be patched")
	}
	for _, name := range []string{f.OldName, f.NewName} {
		// Traditional diffs keep git's a/ and b/ prefixes in the names.
		if name != "" && name != rel && name != "a/"+rel && name != "b/"+rel {
			return nil, fail("the diff is of %s, but the patch file is named for %s", name, rel)
		}
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(data), f); err != nil {
		return nil, fail("%v", err)
	}
	return out.Bytes(), nil
}

// makePatch is the patch turning upstream into edited, or nil when they
// are equal.
func makePatch(rel string, upstream, edited []byte) ([]byte, bool) {
	if bytes.Equal(upstream, edited) {
		return nil, true
	}
	d, ok := textdiff.Patch("a/"+rel, "b/"+rel, upstream, edited)
	return []byte(d), ok
}
