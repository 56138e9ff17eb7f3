package targets

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"syscall"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// instructionMeta is instruction frontmatter that only steers targets
// (Cursor rules, VS Code instruction files); it is never written into an
// aggregated file and never warned about.
var instructionMeta = []string{"description", "globs", "alwaysApply", "applyTo"}

// instructionBody is the text of a module's AGENTS.md without its
// frontmatter (and without the blank lines that followed it).
func instructionBody(lm *module.LoadedModule) []byte {
	if lm.Frontmatter == nil {
		return lm.Body
	}
	return bytes.TrimLeft(lm.Body, "\r\n")
}

// instructionsFile adds the aggregated instructions file at p for mods.
func (r *renderer) instructionsFile(p fsys.AbsPath, mods []*module.LoadedModule) error {
	if len(mods) == 0 {
		return nil
	}
	existing, err := r.readExisting(p)
	if err != nil {
		return err
	}
	ids := make([]string, len(mods))
	for i, lm := range mods {
		r.dropKeys(lm, "instructions", nil, instructionMeta)
		ids[i] = lm.ID
	}
	data, marked := composeInstructions(existing, mods)
	r.add(p, data, 0o644, ids...)
	r.files[len(r.files)-1].Marked = marked
	return nil
}

// readExisting returns the current bytes of p, or nil when it does not exist.
func (r *renderer) readExisting(p fsys.AbsPath) ([]byte, error) {
	if r.rc.FS == nil {
		return nil, nil
	}
	data, err := r.rc.FS.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		// An OS error gets this file's own message and hint; any other
		// agentpack error (a refused link, a read-only system) stays as it is.
		var ae *apperr.Error
		var errno syscall.Errno
		if errors.As(err, &ae) && !errors.As(err, &errno) {
			return nil, err
		}
		code := apperr.IOFailed
		if errors.Is(err, fs.ErrPermission) {
			code = apperr.IOPermissionDenied
		}
		return nil, apperr.Wrap(err, code, "cannot read %s", p).
			WithHint("agentpack reads the existing file to keep your text outside its markers").
			With("path", p.String()).With("path_posix", p.ToSlash())
	}
	return data, nil
}

// composeInstructions joins the modules' bodies. One module alone is written
// raw; several are wrapped in markers, in id order, one blank line apart. If
// the existing file already has markers, its text before the first and after
// the last marker is kept and the marker form is always used. marked says
// the marker form was used.
func composeInstructions(existing []byte, mods []*module.LoadedModule) (data []byte, marked bool) {
	prefix, suffix, adopted := outsideMarkers(string(existing))
	if len(mods) == 1 && !adopted {
		return instructionBody(mods[0]), false
	}
	var b strings.Builder
	b.WriteString(prefix)
	for i, lm := range mods {
		if i > 0 {
			b.WriteString("\n\n")
		}
		body := string(instructionBody(lm))
		b.WriteString(target.MarkerStartPrefix + lm.ID + target.MarkerStartSuffix + "\n")
		b.WriteString(body)
		if !strings.HasSuffix(body, "\n") {
			b.WriteString("\n")
		}
		b.WriteString(target.MarkerEnd)
	}
	b.WriteString("\n")
	b.WriteString(suffix)
	return []byte(b.String()), true
}

// outsideMarkers returns the user's text around the agentpack blocks of
// text; ok is false when text has no complete block.
func outsideMarkers(text string) (prefix, suffix string, ok bool) {
	prefix, _, suffix, ok = target.SplitMarked(text)
	return prefix, suffix, ok
}
