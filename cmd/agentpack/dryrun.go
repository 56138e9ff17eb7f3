package main

import (
	"encoding/json"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/textdiff"
)

// DryRunWrite is one file a --dry-run command would have written.
type DryRunWrite struct {
	Path      string `json:"path"`
	PathPosix string `json:"path_posix"`
	Unified   string `json:"unified,omitempty"`
}

// dryRunEngine returns the engine to run a file-editing command with and,
// under --dry-run, the preview that turns the command's data into the same
// data plus `dry_run: true` and `would_write` (each file with its diff);
// otherwise preview is nil and the engine writes for real.
func (a *App) dryRunEngine() (*engine.Engine, func(data any, extra any) *result) {
	eng := a.Engine()
	if a.recorder == nil {
		return eng, nil
	}
	return eng, func(data any, _ any) *result { return a.dryRunPreview(data) }
}

// dryRunPreview renders what the recording System saw as the data of a dry
// run: data plus `dry_run: true` and `would_write`.
func (a *App) dryRunPreview(data any) *result {
	writes := a.recordedWrites(a.recorder)
	out := map[string]any{}
	if b, err := json.Marshal(data); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	out["dry_run"] = true
	out["would_write"] = writes
	return &result{Data: out, previewed: true, Human: func(p *Printer) {
		p.Printf("Dry run: nothing written. Would write %d file(s):\n", len(writes))
		for _, w := range writes {
			p.Printf("  %s\n", p.Path(w.Path))
			if w.Unified != "" && len(writes) == 1 {
				p.Diff(w.Unified)
			}
		}
	}}
}

// recordedWrites lists the files rec wrote or removed, each with its diff.
func (a *App) recordedWrites(rec *fsys.DryRunSystem) []DryRunWrite {
	base := rec.Base()
	var writes []DryRunWrite
	for _, op := range rec.Ops() {
		// Folders come and go with the files in them: only files are
		// reported.
		if op.Kind != fsys.OpWrite && op.Kind != fsys.OpRemove {
			continue
		}
		w := DryRunWrite{Path: op.Path.String(), PathPosix: op.Path.ToSlash()}
		before, _ := base.ReadFile(op.Path)
		from := op.Path.String()
		if before == nil {
			from = "/dev/null"
		}
		if u, ok := textdiff.Unified(from, op.Path.String(), before, op.Data); ok {
			w.Unified = u
		}
		writes = append(writes, w)
	}
	return writes
}
