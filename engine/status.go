package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/gcpace"
	"github.com/agentpack/agentpack/internal/workers"
)

// Drift kinds (SPEC §6).
const (
	DriftModified = "modified"
	DriftMissing  = "missing"
	DriftExtra    = "extra"
	DriftPending  = "pending"
)

// DriftKinds lists the valid --only values.
var DriftKinds = []string{DriftMissing, DriftModified, DriftExtra, DriftPending}

// DriftItem is one path that differs between desired, actual and last applied.
type DriftItem struct {
	Target    string       `json:"target"`
	Root      fsys.AbsPath `json:"root"`
	RootPosix string       `json:"root_posix"`
	Path      fsys.AbsPath `json:"path"`
	PathPosix string       `json:"path_posix"`
	Expected  Digest       `json:"expected"`
	Actual    Digest       `json:"actual"`
	Kind      string       `json:"kind"`
}

// Digest is a file's SHA-256 in hex, "" for none; its JSON is
// "sha256:<hex>", or null. It holds the plan's own hex string: a status
// of 9,000 pending updates makes no prefixed copy of each hash.
type Digest string

// MarshalJSON implements [json.Marshaler].
func (d Digest) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("null"), nil
	}
	if !checksum.IsLowerHex(string(d)) { // a damaged manifest's hash, quoted safely
		return json.Marshal("sha256:" + string(d))
	}
	return []byte(`"sha256:` + string(d) + `"`), nil
}

// UnmarshalJSON implements [json.Unmarshaler] (a kept answer is decoded).
func (d *Digest) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil {
		*d = ""
		return nil
	}
	h, ok := strings.CutPrefix(*s, "sha256:")
	if !ok {
		return fmt.Errorf("digest %q does not start with sha256:", *s)
	}
	*d = Digest(h)
	return nil
}

// minDriftItemJSON is the size of a [DriftItem] in JSON with every string
// empty: its field names and punctuation.
const minDriftItemJSON = len(`{"target":"","root":"","root_posix":"","path":"","path_posix":"","expected":null,"actual":null,"kind":""}`)

// minJSONSize is a size d's JSON is at least (see [sizedAnswer]).
func (d *StatusData) minJSONSize() int { return len(d.Drift) * minDriftItemJSON }

// DriftSummary counts drift by kind.
type DriftSummary struct {
	Modified int `json:"modified"`
	Missing  int `json:"missing"`
	Extra    int `json:"extra"`
	Pending  int `json:"pending"`
}

func (s *DriftSummary) add(kind string) {
	switch kind {
	case DriftModified:
		s.Modified++
	case DriftMissing:
		s.Missing++
	case DriftExtra:
		s.Extra++
	case DriftPending:
		s.Pending++
	}
}

// RootSummary is drift per managed root.
type RootSummary struct {
	Target    string       `json:"target"`
	Root      fsys.AbsPath `json:"root"`
	RootPosix string       `json:"root_posix"`
	Summary   DriftSummary `json:"summary"`
}

// NextAction is a suggested follow-up command.
type NextAction struct {
	Action  string `json:"action"`
	Command string `json:"command"`
}

// StatusData is the data of `agentpack status`.
type StatusData struct {
	Profile             string        `json:"profile"`
	Targets             []string      `json:"targets"`
	Drift               []DriftItem   `json:"drift"`
	Summary             DriftSummary  `json:"summary"`
	SummaryByRoot       []RootSummary `json:"summary_by_root"`
	NextActions         []string      `json:"next_actions"`
	NextActionsDetailed []NextAction  `json:"next_actions_detailed"`
}

// Status reports three-way drift: desired vs actual vs last applied.
func (e *Engine) Status(ctx context.Context, req Request, only []string) (*State, *StatusData, error) {
	for _, k := range only {
		if !slices.Contains(DriftKinds, k) {
			return nil, nil, apperr.New(apperr.InvalidArgument, "unknown --only kind %q", k).
				WithHint("use any of: %s", strings.Join(DriftKinds, ", "))
		}
	}
	key := fmt.Sprintf("status\x00%q\x00%#v", only, req)
	return memoized(ctx, e, key, func(ctx context.Context) (*State, *StatusData, error) {
		st, p, err := e.Plan(ctx, req)
		if err != nil {
			return st, nil, err
		}
		if len(only) == 0 { // each change is at least one drift item
			e.keepingNone(len(p.Changes) * minDriftItemJSON)
		}
		// What the plan made and let go of (its reads, the actual
		// files' stat data) is collected before the drift of thousands
		// of changes is built: the first status after rolling back 9,000
		// updates peaked at 40-44 MiB, 39-40 with this.
		gcpace.Between(len(p.Changes))
		e.keepInSyncAlongside(req, st, p)
		out := e.status(st, p, only)
		// Callers read what a kept answer's State has (warnings): the
		// desired state and the plan are let go of here, so keeping the
		// answer (a fingerprint of every path looked at) does not hold
		// them too.
		return answerState(st.Req, st.Repo, st.Project, st.Profile, st.Targets, st.Warnings), out, nil
	})
}

// status computes drift from an already made plan.
func (e *Engine) status(st *State, p *plan.Plan, only []string) *StatusData {
	out := &StatusData{Profile: st.Profile, Targets: st.Targets, Drift: []DriftItem{}, SummaryByRoot: []RootSummary{},
		NextActions: []string{}, NextActionsDetailed: []NextAction{}}
	// Each path is one item: drift found against the manifests first,
	// then what the plan would change, then files only the desired state
	// tells apart. Extras are none of those.
	drifted := map[fsys.AbsPath]bool{}
	add := func(target string, root, path fsys.AbsPath, kind string, expected, actual Digest) {
		out.Drift = append(out.Drift, DriftItem{Target: target, Root: root, RootPosix: root.ToSlash(), Path: path,
			PathPosix: path.ToSlash(), Expected: expected, Actual: actual, Kind: kind})
	}
	// Last applied vs actual.
	guard := p.Guard
	if guard == nil {
		guard = plan.NewLinkGuard(e.Sys)
	}
	for _, r := range st.Desired.Roots {
		m := p.Manifests[r]
		if m == nil {
			continue
		}
		paths := managedPaths(p, r)
		for i, f := range m.ManagedFiles {
			abs := paths[i]
			if drifted[abs] || st.Desired.RootFor(r.Target, abs) != r.Path {
				continue
			}
			sha, looked := p.Actual[abs]
			if !looked { // neither desired nor deletable: read it here
				if a, err := plan.ReadActual(e.Sys, guard, nil, r.Path, abs, ""); err == nil && a.Exists {
					sha = a.SHA256
				}
			}
			switch {
			case sha == "":
				add(r.Target, r.Path, abs, DriftMissing, Digest(f.SHA256), "")
				drifted[abs] = true
			case sha != f.SHA256 && e.editedSince(guard, r.Path, abs, f, sha):
				add(r.Target, r.Path, abs, DriftModified, Digest(f.SHA256), Digest(sha))
				drifted[abs] = true
			}
		}
	}
	// Desired vs last applied. The plan changes each path once.
	for _, c := range p.Changes {
		if drifted[c.Path] {
			continue
		}
		var expected, actual Digest
		if c.AfterSHA256 != nil {
			expected = Digest(*c.AfterSHA256)
		}
		if c.BeforeSHA256 != nil {
			actual = Digest(*c.BeforeSHA256)
		}
		add(c.Target, c.Root, c.Path, DriftPending, expected, actual)
	}
	// A file the plan leaves alone whose manifest entry is behind (or
	// missing) is pending too. Seldom any: the plan's paths are looked up
	// only then.
	var planned map[fsys.AbsPath]bool
	for _, f := range st.Desired.Files {
		last, ok := p.Managed[f.Path]
		if drifted[f.Path] || ok && !last.EditedSince(f.SHA256, f.Data) {
			continue
		}
		if planned == nil {
			planned = p.ChangedPaths()
		}
		if !planned[f.Path] {
			planned[f.Path] = true
			add(f.Target, f.Root, f.Path, DriftPending, Digest(f.SHA256), Digest(f.SHA256))
		}
	}
	// Extras: unmanaged files in folders agentpack owns.
	for _, r := range st.Desired.Roots {
		if !r.ScanExtras {
			continue
		}
		var listed map[fsys.AbsPath]bool // what r's manifest lists, when another root's does too
		managed := func(path fsys.AbsPath) bool {
			m, ok := p.Managed[path] // every path a manifest lists; the deepest root's
			if !ok || *m.Root == r {
				return ok
			}
			if listed == nil {
				listed = map[fsys.AbsPath]bool{}
				for _, abs := range managedPaths(p, r) {
					listed[abs] = true
				}
			}
			return listed[path]
		}
		desiredFile := func(path []byte) bool { return st.Desired.FileAt(path) != nil }
		for _, path := range e.walkFiles(p.StatCache, guard, r.Path, desiredFile) {
			if managed(path) || st.Desired.File(path) != nil || plan.IsTargetManifestName(path.Base()) {
				continue
			}
			if st.Desired.RootFor(r.Target, path) != r.Path {
				continue
			}
			if data, err := e.Sys.ReadFile(path); err == nil {
				add(r.Target, r.Path, path, DriftExtra, "", Digest(checksum.SHA256Hex(data)))
			}
		}
	}
	for _, m := range p.Manifests {
		if m != nil && m.Profile != "" && m.Profile != st.Profile {
			st.Warn("the last deploy used profile %q; this status compares with profile %q (pass --profile %s to compare with that one)", m.Profile, st.Profile, m.Profile)
			break
		}
	}
	p.StatCache.Save() // the folders the extras walk listed
	out.finish(st, only)
	return out
}

// editedSince reports whether the file at abs (hash sha, not f.SHA256)
// was edited since f was written; a marked file is read again to compare
// only its agentpack blocks.
func (e *Engine) editedSince(guard *plan.LinkGuard, root, abs fsys.AbsPath, f plan.ManagedFile, sha string) bool {
	if f.OwnedSHA256 == "" {
		return true
	}
	a, err := plan.ReadActual(e.Sys, guard, nil, root, abs, "")
	if err != nil || !a.Exists {
		return true
	}
	return f.EditedSince(a.SHA256, a.Data)
}

func (out *StatusData) finish(st *State, only []string) {
	if len(only) > 0 {
		kept := out.Drift[:0]
		for _, d := range out.Drift {
			if slices.Contains(only, d.Kind) {
				kept = append(kept, d)
			}
		}
		out.Drift = kept
	}
	sort.Slice(out.Drift, func(i, j int) bool {
		a, b := out.Drift[i], out.Drift[j]
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.Path < b.Path
	})
	byRoot := map[desired.Root]*RootSummary{}
	for _, r := range st.Desired.Roots {
		byRoot[desired.Root{Target: r.Target, Path: r.Path}] = &RootSummary{Target: r.Target, Root: r.Path, RootPosix: r.Path.ToSlash()}
	}
	for _, d := range out.Drift {
		out.Summary.add(d.Kind)
		if rs := byRoot[desired.Root{Target: d.Target, Path: d.Root}]; rs != nil {
			rs.Summary.add(d.Kind)
		}
	}
	for _, r := range st.Desired.Roots {
		out.SummaryByRoot = append(out.SummaryByRoot, *byRoot[desired.Root{Target: r.Target, Path: r.Path}])
	}
	s := out.Summary
	req := st.Req
	if s.Modified > 0 {
		out.next("diff", req.Command("diff"))
	}
	switch {
	case s.Modified > 0:
		// Deploying over hand edits needs --force; their bytes go into the snapshot.
		out.next("deploy_force", req.Command("deploy", "--apply", "--force"))
	case s.Pending+s.Missing > 0:
		out.next("deploy", req.Command("deploy", "--apply"))
	}
}

func (out *StatusData) next(action, command string) {
	out.NextActions = append(out.NextActions, command)
	out.NextActionsDetailed = append(out.NextActionsDetailed, NextAction{Action: action, Command: command})
}

// walkFiles lists regular files under dir (recursively) but those skip
// says to leave out, told by the path in a buffer (at 10,000 deployed
// files nearly all are desired ones: no string is made for them); a
// missing dir is empty. Subfolders of dir are walked in parallel: a
// skills root holds one folder per skill.
func (e *Engine) walkFiles(cache *plan.StatCache, guard *plan.LinkGuard, dir fsys.AbsPath, skip func(path []byte) bool) []fsys.AbsPath {
	var walk func(d fsys.AbsPath) []fsys.AbsPath
	walk = func(d fsys.AbsPath) []fsys.AbsPath {
		var out []fsys.AbsPath
		var buf []byte
		entries, err := plan.ReadDirCached(e.Sys, cache, guard, d)
		if err != nil {
			return nil
		}
		for _, ent := range entries {
			switch {
			case ent.Dir:
				out = append(out, walk(d.JoinName(ent.Name))...)
			case ent.Regular:
				if d != "/" { // d + "/" + name is what JoinName gives
					buf = append(append(append(buf[:0], d...), '/'), ent.Name...)
					if skip(buf) {
						continue
					}
				}
				out = append(out, d.JoinName(ent.Name))
			}
		}
		return out
	}
	entries, err := plan.ReadDirCached(e.Sys, cache, guard, dir)
	if err != nil {
		return nil
	}
	parts := make([][]fsys.AbsPath, len(entries))
	workers.Parallel(len(entries), func(i int) {
		p := dir.JoinName(entries[i].Name)
		switch {
		case entries[i].Dir:
			parts[i] = walk(p)
		case entries[i].Regular:
			parts[i] = []fsys.AbsPath{p}
		}
	})
	var out []fsys.AbsPath
	for _, part := range parts {
		out = append(out, part...)
	}
	slices.Sort(out)
	return out
}

// managedPaths are where the files of r's manifest lie.
func managedPaths(p *plan.Plan, r desired.Root) []fsys.AbsPath {
	if paths, ok := p.ManagedPaths[r]; ok {
		return paths
	}
	m := p.Manifests[r]
	if m == nil {
		return nil
	}
	paths := make([]fsys.AbsPath, len(m.ManagedFiles))
	for i, f := range m.ManagedFiles {
		paths[i] = f.In(r.Path)
	}
	return paths
}
