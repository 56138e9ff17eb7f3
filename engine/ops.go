package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentpack/agentpack/engine/apply"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/jsonstream"
	"github.com/agentpack/agentpack/internal/textdiff"
	"github.com/agentpack/agentpack/internal/workers"
)

// Plan loads the request's desired state and compares it with the disk.
// The state comes from the [SourceCache] when nothing it was compiled from
// changed: such a State has no Manifest and no Modules. The changes hold
// only the hash of the bytes they replace ([plan.Compute]): a diff reads
// them when it shows them ([plan.Plan.BeforeBytes]).
func (e *Engine) Plan(ctx context.Context, req Request) (*State, *plan.Plan, error) {
	return e.planWith(ctx, req, e.loadCompiled, false)
}

// planWith is Plan with the state load picks.
//
// keepBefore keeps the bytes each change replaces ([plan.Compute]).
func (e *Engine) planWith(ctx context.Context, req Request, load func(context.Context, Request) (*State, error), keepBefore bool) (*State, *plan.Plan, error) {
	// The stat cache is read while the load runs (a warm load is mostly
	// stats of the sources): neither needs the other, and a stale entry
	// is only a miss, as every entry is checked against the disk.
	sys := e.Sys
	cached := make(chan *plan.StatCache, 1)
	go func() { cached <- plan.LoadStatCache(sys, abs(e.Env.StateDir())).Preload() }()
	st, err := load(ctx, req)
	cache := <-cached
	if err != nil {
		return nil, nil, err
	}
	p, err := plan.Compute(st.Desired, st.Profile, st.Project, e.Sys, cache, func(w string) { st.Warn("%s", w) }, keepBefore)
	if err != nil {
		return st, nil, err
	}
	cache.Save()
	if len(p.Changes) == 0 {
		p.ManifestsBehind = !apply.ManifestsCurrent(st.Desired, p)
	}
	warnOtherRepo(st, p)
	return st, p, nil
}

// warnOtherRepo warns when a root was last deployed from another
// desired-state repo: this plan would take over (or delete) what that repo
// wrote. agentpack expects one desired-state repo per machine.
func warnOtherRepo(st *State, p *plan.Plan) {
	for _, m := range p.Manifests {
		if m != nil && m.Repo != "" && m.Repo != st.Repo {
			st.Warn("these targets were last deployed from the repo %s; this plan comes from %s and would replace or delete what that repo deployed (use one desired-state repo per machine)", m.Repo, st.Repo)
			return
		}
	}
}

// DiffChange is a plan change with its unified diff. It points at the
// plan's change rather than copying it: a diff of 100,000 creates holds
// their changes once.
type DiffChange struct {
	*plan.Change
	// Unified is the change's unified diff, zero when there is none; the
	// diff of a created or deleted file is written from the file's bytes
	// when it is shown (see [textdiff.Diff]).
	Unified textdiff.Diff `json:"unified,omitzero"`
}

// AppendJSON writes c as encoding/json does (it is a
// [jsonstream.Appender]), with the diff's text escaped once: encoding/json
// would escape it, then scan it again to check it and again to indent it,
// which is most of the work of `diff --json` when 10,000 files are new.
func (c *DiffChange) AppendJSON(dst []byte, prefix, indent string, escapeHTML bool) ([]byte, error) {
	buf := changeJSON.Get().(*bytes.Buffer)
	defer changeJSON.Put(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(escapeHTML)
	var err error
	if c.Unified.IsZero() || escapeHTML {
		err = enc.Encode(c)
	} else {
		// encoding/json writes an embedded struct's fields first.
		err = enc.Encode(c.Change)
	}
	if err != nil {
		return dst, err
	}
	fields := buf.Bytes()[:buf.Len()-1] // Encode's newline
	if c.Unified.IsZero() || escapeHTML {
		if indent == "" {
			return append(dst, fields...), nil
		}
		return jsonstream.AppendIndent(dst, fields, prefix, indent), nil
	}
	if len(fields) < 3 || fields[len(fields)-1] != '}' {
		return dst, fmt.Errorf("unexpected JSON of a change: %.40q", fields)
	}
	// The change's fields, unclosed, then "unified" and the brace.
	body := fields[:len(fields)-1]
	if indent == "" {
		dst = append(append(dst, body...), `,"unified":`...)
		return append(c.Unified.AppendJSON(dst), '}'), nil
	}
	dst = append(jsonstream.AppendIndent(dst, body, prefix, indent), ",\n"...)
	dst = append(append(append(dst, prefix...), indent...), `"unified": `...)
	dst = c.Unified.AppendJSON(dst)
	return append(append(append(dst, '\n'), prefix...), '}'), nil
}

// changeJSON holds the buffers DiffChange.AppendJSON encodes a change in.
var changeJSON = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// DiffData is the data of `agentpack diff`.
type DiffData struct {
	Profile string       `json:"profile"`
	Targets []string     `json:"targets"`
	Changes []DiffChange `json:"changes"`
	Summary plan.Summary `json:"summary"`
}

// Diff returns the plan with a unified diff per change. Binary files and
// diffs over 100 KiB are left out with a warning. With the CLI's kept
// answers on, an empty diff is kept like status.
func (e *Engine) Diff(ctx context.Context, req Request) (*State, *DiffData, error) {
	return keptWhenRecomputed(ctx, e, req, diffKey(req), func(ctx context.Context) (*State, *DiffData, error) {
		st, p, shapes, err := e.planDiffing(ctx, req, true)
		if err != nil {
			return st, nil, err
		}
		return st, diffData(st, p, shapes), nil
	}, func(d *DiffData) bool { return len(d.Changes) == 0 })
}

// planDiffing is Plan for a command that shows the diff of every change
// when diffing is set (see [Engine.diffing]), with the diff shapes its
// load took.
func (e *Engine) planDiffing(ctx context.Context, req Request, diffing bool) (*State, *plan.Plan, *diffShapes, error) {
	e.diffing, e.kept, e.shapes = diffing, new(atomic.Int64), newDiffShapes()
	st, p, err := e.Plan(ctx, req)
	shapes := e.shapes
	e.diffing, e.shapes = false, nil
	return st, p, shapes, err
}

func diffData(st *State, p *plan.Plan, shapes *diffShapes) *DiffData {
	d := &DiffData{Profile: p.Profile, Targets: p.Targets, Changes: make([]DiffChange, len(p.Changes)), Summary: p.Summary}
	// Each change's diff on its own, on every CPU (an update's diff is a
	// line diff, a create's reads its bytes when they were dropped); the
	// warnings in the changes' order.
	omitted := make([]string, len(p.Changes))
	var held atomic.Int64
	workers.Chunks(len(p.Changes), func(i int) bool {
		d.Changes[i], omitted[i] = diffChange(p, &p.Changes[i], &held, shapes)
		return true
	})
	// The diffs that let go of their bytes read them again in the order
	// they are shown, a few ahead.
	ahead := newReadAhead(p.Sys)
	for i := range d.Changes {
		if dc := &d.Changes[i]; dc.Unified.Reloads() && dc.Op == plan.OpCreate {
			k := ahead.add(dc.Src())
			dc.Unified = dc.Unified.Dropped(func() ([]byte, error) { return ahead.get(k) })
		}
	}
	for _, w := range omitted {
		if w != "" {
			st.Warn("%s", w)
		}
	}
	return d
}

// diffHeld is how many bytes of created files read from their sources
// the diffs of one plan hold: past it, a created file's diff lets go of
// them and reads them again when it is written ([textdiff.Diff.Dropped]),
// so a diff of 100,000 new files is not as large as the files.
var diffHeld int64 = 16 << 20 // a variable for tests

// diffChange is c with its unified diff, or with none and the warning
// saying why. held counts the bytes of created files the plan's diffs
// hold (see [diffHeld]).
func diffChange(p *plan.Plan, c *plan.Change, held *atomic.Int64, shapes *diffShapes) (DiffChange, string) {
	dc := DiffChange{Change: c}
	from, to := c.Path.ToSlash(), c.Path.ToSlash() // like diff -u of two files
	if c.Op == plan.OpCreate {
		from = "/dev/null"
	} else if c.Op == plan.OpDelete {
		to = "/dev/null"
	}
	if len(c.Entries) > 0 {
		// A key-level file: the diff of the entries agentpack edits, not
		// of the whole file (~/.claude.json is large and mostly not ours).
		var u strings.Builder
		for _, e := range c.Entries {
			u.WriteString(e.Unified)
		}
		dc.Unified = textdiff.Text(u.String())
		return dc, ""
	}
	if shape, ok := shapes.of(c); ok {
		// Hashed at load without its bytes: the diff is sized from the
		// shape taken then, and the file read once, when shown.
		sys, src := p.Sys, c.Src()
		u, ok := textdiff.Created(from, to, shape, func() ([]byte, error) { return sys.ReadFile(src) })
		if !ok {
			return dc, fmt.Sprintf("diff of %s omitted (binary or over 100 KiB)", c.Path)
		}
		dc.Unified = u
		return dc, ""
	}
	after, err := p.AfterBytes(c)
	if err != nil {
		return dc, fmt.Sprintf("diff of %s omitted: %s", c.Path, err)
	}
	before, err := p.BeforeBytes(c)
	if err != nil {
		return dc, fmt.Sprintf("diff of %s omitted: %s", c.Path, apperr.As(err).Message)
	}
	u, ok := textdiff.UnifiedDiff(from, to, before, after)
	if !ok {
		return dc, fmt.Sprintf("diff of %s omitted (binary or over 100 KiB)", c.Path)
	}
	if c.Op == plan.OpCreate && c.After() == nil && held.Add(int64(len(after))) > diffHeld {
		// Read from its source for this diff: read again when shown
		// (through what names the source, not the plan, which can go;
		// diffData has them read a few ahead).
		// Not hashed again: bytes of another length are shown as a
		// changed file, and a deploy plans again whatever a diff showed.
		sys, src := p.Sys, c.Src()
		u = u.Dropped(func() ([]byte, error) { return sys.ReadFile(src) })
	}
	if c.Op == plan.OpDelete && held.Add(int64(len(before))) > diffHeld {
		// Likewise a removed file's bytes, read from the target again.
		u = u.Dropped(func() ([]byte, error) { return p.BeforeBytes(c) })
	}
	dc.Unified = u
	return dc, ""
}

// PreviewData is the data of `agentpack preview`.
type PreviewData struct {
	Profile string       `json:"profile"`
	Targets []string     `json:"targets"`
	Plan    PreviewPlan  `json:"plan"`
	Diff    *PreviewDiff `json:"diff,omitempty"`
}

// PreviewPlan is preview's plan block.
type PreviewPlan struct {
	Changes []plan.Change `json:"changes"`
	Summary plan.Summary  `json:"summary"`
}

// PreviewDiff is preview's diff block.
type PreviewDiff struct {
	Changes []plan.Change `json:"changes"`
	Summary plan.Summary  `json:"summary"`
	Files   []PreviewFile `json:"files"`
}

// PreviewFile is one file of preview's diff block.
type PreviewFile struct {
	Target     string  `json:"target"`
	Root       string  `json:"root"`
	RootPosix  string  `json:"root_posix"`
	Path       string  `json:"path"`
	PathPosix  string  `json:"path_posix"`
	Op         string  `json:"op"`
	BeforeHash *string `json:"before_hash"`
	AfterHash  *string `json:"after_hash"`
	Unified    string  `json:"unified,omitempty"`
}

// Preview is plan plus, when withDiff, per-file diffs.
func (e *Engine) Preview(ctx context.Context, req Request, withDiff bool) (*State, *PreviewData, error) {
	st, p, shapes, err := e.planDiffing(ctx, req, withDiff)
	if err != nil {
		return st, nil, err
	}
	out := &PreviewData{Profile: p.Profile, Targets: p.Targets, Plan: PreviewPlan{Changes: p.Changes, Summary: p.Summary}}
	if withDiff {
		dd := diffData(st, p, shapes)
		pd := &PreviewDiff{Changes: p.Changes, Summary: p.Summary, Files: []PreviewFile{}}
		for _, c := range dd.Changes {
			pd.Files = append(pd.Files, PreviewFile{Target: c.Target, Root: c.Root.String(), RootPosix: c.Root.ToSlash(),
				Path: c.Path.String(), PathPosix: c.PathPosix, Op: c.Op, BeforeHash: prefixed(c.BeforeSHA256),
				AfterHash: prefixed(c.AfterSHA256), Unified: c.Unified.String()})
		}
		out.Diff = pd
	}
	return st, out, nil
}

func prefixed(h *string) *string {
	if h == nil {
		return nil
	}
	s := fmt.Sprintf("sha256:%s", *h)
	return &s
}
