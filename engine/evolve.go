package engine

import (
	"bytes"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

// EvolveProposeRequest is `evolve propose`.
type EvolveProposeRequest struct {
	Request
	// ModuleID limits the proposal to one module's files.
	ModuleID string
	// Scope is the overlay layer written: global (default), machine or project.
	Scope string
	// Branch names the new branch (default evolve/propose-<scope>-<module>-<time>).
	Branch string
	// DryRun reports the candidates and files without touching git.
	DryRun bool
}

// EvolveItem is one hand edit that becomes an overlay file.
type EvolveItem struct {
	ModuleID  string       `json:"module_id"`
	Target    string       `json:"target"`
	Path      fsys.AbsPath `json:"path"`
	PathPosix string       `json:"path_posix"`
	// File is the module-relative file the edit is written to.
	File string `json:"file"`
}

// EvolveSuggestion is a follow-up for a skipped file.
type EvolveSuggestion struct {
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// EvolveSkipped is a drifted file evolve cannot turn into an overlay, and why.
type EvolveSkipped struct {
	Target        string             `json:"target"`
	Path          fsys.AbsPath       `json:"path"`
	PathPosix     string             `json:"path_posix"`
	Reason        string             `json:"reason"`
	ReasonCode    string             `json:"reason_code"`
	ReasonMessage string             `json:"reason_message"`
	NextActions   []string           `json:"next_actions"`
	ModuleID      string             `json:"module_id,omitempty"`
	ModuleIDs     []string           `json:"module_ids,omitempty"`
	Suggestions   []EvolveSuggestion `json:"suggestions,omitempty"`
}

// EvolveProposeSummary counts drifted files.
type EvolveProposeSummary struct {
	DriftedProposeable int `json:"drifted_proposeable"`
	DriftedSkipped     int `json:"drifted_skipped"`
	SkippedMissing     int `json:"skipped_missing"`
	SkippedMultiModule int `json:"skipped_multi_module"`
	SkippedReadError   int `json:"skipped_read_error"`
}

// EvolveProposeData is the data of `evolve propose`.
type EvolveProposeData struct {
	// Created says the branch was created; otherwise Reason says why not
	// (no_drift, no_proposeable_drift, dry_run).
	Created   bool   `json:"created"`
	Reason    string `json:"reason,omitempty"`
	Scope     string `json:"scope"`
	Branch    string `json:"branch,omitempty"`
	Commit    string `json:"commit,omitempty"`
	Committed bool   `json:"committed"`
	// Files are the overlay files committed (or, in a dry run, that would
	// be), relative to the desired-state repo.
	Files      []string             `json:"files"`
	FilesPosix []string             `json:"files_posix"`
	Candidates []EvolveItem         `json:"candidates"`
	Skipped    []EvolveSkipped      `json:"skipped"`
	Summary    EvolveProposeSummary `json:"summary"`
	Warnings   []string             `json:"-"`
}

// Evolve skip reasons (reason and reason_code), as the original names them
// plus those of outputs this port can tell apart.
const (
	evolveMissing     = "missing"
	evolveMultiModule = "multi_module_output"
	evolveTransformed = "transformed_output"
	evolveConfigEntry = "config_entries"
	evolvePatchKind   = "patch_overlay"
)

var evolveMessages = map[string]string{
	evolveMissing:     "expected managed output is missing on disk (use evolve.restore or deploy to recreate)",
	evolveMultiModule: "output is produced by multiple modules and cannot be proposed safely (add markers or split outputs)",
	evolveTransformed: "output is rendered from the module's files by the target, not copied, so the edit cannot be written back to one module file",
	evolveConfigEntry: "entries of a client's MCP config come from mcp modules; edit the module's server definition instead",
	evolvePatchKind:   "the module's overlay in this scope is a patch overlay; evolve writes whole files (use another --scope, or turn the edit into a patch)",
}

var evolveSuggestions = map[string][]EvolveSuggestion{
	evolveMissing: {
		{Action: "agentpack evolve restore", Reason: "restore missing desired outputs (create-only)"},
		{Action: "agentpack deploy --apply", Reason: "re-deploy desired state and write/update manifests"},
	},
	evolveMultiModule: {
		{Action: "Add per-module markers to aggregated instructions outputs", Reason: "allow evolve.propose to map drift back to a single module"},
		{Action: "Split aggregated outputs so each file maps to one module", Reason: "avoid multi-module outputs that cannot be proposed safely"},
	},
}

// proposal is one overlay file evolve writes.
type proposal struct {
	item EvolveItem
	data []byte
	mode fs.FileMode
}

// evolveScan sorts a plan's hand edits into proposals and skipped files.
type evolveScan struct {
	st       *State
	req      EvolveProposeRequest
	scope    overlay.Scope
	out      *EvolveProposeData
	byID     map[string]*module.LoadedModule
	props    []proposal
	seen     map[[2]string]int // module id, file → index in props
	conflict map[[2]string]bool
}

// findProposals walks p's changes: a managed file edited by hand (or an
// unmanaged one agentpack would overwrite) is drift; an update that only
// carries a new upstream is not.
func (e *Engine) findProposals(st *State, p *plan.Plan, req EvolveProposeRequest, scope overlay.Scope, out *EvolveProposeData) []proposal {
	s := &evolveScan{st: st, req: req, scope: scope, out: out, byID: map[string]*module.LoadedModule{},
		seen: map[[2]string]int{}, conflict: map[[2]string]bool{}}
	for _, lm := range st.Modules {
		s.byID[lm.ID] = lm
	}
	for _, c := range p.Changes {
		if req.ModuleID != "" && !slices.Contains(c.ModuleIDs, req.ModuleID) {
			continue
		}
		switch {
		case c.Op == plan.OpDelete:
		case len(c.Entries) > 0:
			for _, en := range c.Entries {
				if en.UpdateKind == plan.UpdateDrifted || en.UpdateKind == plan.UpdateAdopt {
					s.skip(c, evolveConfigEntry, "", c.ModuleIDs)
					break
				}
			}
		case c.Op == plan.OpCreate:
			id := ""
			if len(c.ModuleIDs) == 1 {
				id = c.ModuleIDs[0]
			}
			s.skip(c, evolveMissing, id, c.ModuleIDs)
		case c.UpdateKind == plan.UpdateDrifted || c.UpdateKind == plan.UpdateAdopt:
			if f := st.Desired.File(c.Path); f != nil {
				// A source changed under the command reads as no drift
				// to propose; the next run sees it.
				if rendered, err := f.Bytes(e.Sys); err == nil {
					s.drifted(c, rendered, f.ModuleIDs)
				}
			}
		}
	}
	sort.Slice(out.Candidates, func(i, j int) bool {
		a, b := out.Candidates[i], out.Candidates[j]
		return a.ModuleID < b.ModuleID || a.ModuleID == b.ModuleID && a.Path < b.Path
	})
	sort.Slice(out.Skipped, func(i, j int) bool {
		a, b := out.Skipped[i], out.Skipped[j]
		return a.Reason < b.Reason || a.Reason == b.Reason && (a.Target < b.Target || a.Target == b.Target && a.Path < b.Path)
	})
	var props []proposal
	for _, pr := range s.props {
		if !s.conflict[[2]string{pr.item.ModuleID, pr.item.File}] {
			props = append(props, pr)
		}
	}
	return props
}

// drifted maps one edited file back to its modules: one module's section
// of a marked file, or the module file it was copied from.
func (s *evolveScan) drifted(c plan.Change, rendered []byte, ids []string) {
	if secs, ok := sectionEdits(rendered, c.Before(), ids); ok {
		for _, id := range ids {
			if r, ok := secs[id]; ok && (s.req.ModuleID == "" || id == s.req.ModuleID) {
				s.propose(c, id, r[0], r[1])
			}
		}
		return
	}
	if len(ids) != 1 {
		s.skip(c, evolveMultiModule, "", ids)
		return
	}
	s.propose(c, ids[0], rendered, c.Before())
}

// propose records that edited, the deployed form of rendered, goes into
// module id's overlay.
func (s *evolveScan) propose(c plan.Change, id string, rendered, edited []byte) {
	lm := s.byID[id]
	if lm == nil {
		s.skip(c, evolveMultiModule, id, nil)
		return
	}
	rel, data, mode, ok := mapToFile(lm, c.Path, rendered, edited)
	if !ok {
		s.skip(c, evolveTransformed, id, nil)
		return
	}
	if layer, ok := lm.Origins[rel]; ok && scopeRank(overlay.Scope(layer)) > scopeRank(s.scope) {
		s.st.Warn("evolve propose: %s of %s comes from its %s overlay, which wins over the %s overlay this proposal writes", rel, id, layer, s.scope)
	}
	key := [2]string{id, rel}
	if i, dup := s.seen[key]; dup {
		if !bytes.Equal(s.props[i].data, data) && !s.conflict[key] {
			s.conflict[key] = true
			s.st.Warn("evolve propose: skipped %s of %s: deployed copies (%s, %s) were edited differently", rel, id, s.props[i].item.Path, c.Path)
		}
		return
	}
	item := EvolveItem{ModuleID: id, Target: c.Target, Path: c.Path, PathPosix: c.Path.ToSlash(), File: rel}
	s.seen[key] = len(s.props)
	s.props = append(s.props, proposal{item: item, data: data, mode: mode})
	s.out.Candidates = append(s.out.Candidates, item)
	s.out.Summary.DriftedProposeable++
}

func (s *evolveScan) skip(c plan.Change, reason, id string, ids []string) {
	sk := EvolveSkipped{Target: c.Target, Path: c.Path, PathPosix: c.Path.ToSlash(), Reason: reason, ReasonCode: reason,
		ReasonMessage: evolveMessages[reason], NextActions: []string{}, Suggestions: evolveSuggestions[reason]}
	if id != "" {
		sk.ModuleID = id
	} else {
		sk.ModuleIDs = ids
	}
	sum := &s.out.Summary
	sum.DriftedSkipped++
	switch reason {
	case evolveMissing:
		sum.SkippedMissing++
		restore := []string{"evolve", "restore"}
		if id != "" {
			restore = append(restore, "--module-id", id)
		}
		sk.NextActions = []string{s.st.Req.Command(append(restore, "--yes", "--json")...),
			s.st.Req.Command("deploy", "--apply", "--yes", "--json")}
	case evolveMultiModule:
		sum.SkippedMultiModule++
	}
	s.out.Skipped = append(s.out.Skipped, sk)
}

// sectionEdits compares the agentpack blocks of a marked file as rendered
// and as edited: for each of ids whose block changed, its rendered and
// edited text. ok is false unless both have a block for every id.
func sectionEdits(rendered, edited []byte, ids []string) (map[string][2][]byte, bool) {
	if !bytes.Contains(rendered, []byte(target.MarkerStartPrefix)) || !bytes.Contains(edited, []byte(target.MarkerStartPrefix)) {
		return nil, false
	}
	want, ok1 := target.Sections(string(rendered))
	got, ok2 := target.Sections(string(edited))
	if !ok1 || !ok2 {
		return nil, false
	}
	out := map[string][2][]byte{}
	for _, id := range ids {
		w, okw := want[id]
		g, okg := got[id]
		if !okw || !okg {
			return nil, false
		}
		if w != g {
			out[id] = [2][]byte{[]byte(w), []byte(g)}
		}
	}
	return out, true
}

// mapToFile finds the module file rendered came from — a file copied as
// it is (the one whose path the deployed path ends with), or the main file
// whose frontmatter the target left out — and returns that file's new
// content: edited, with the left-out head put back.
func mapToFile(lm *module.LoadedModule, deployed fsys.AbsPath, rendered, edited []byte) (string, []byte, fs.FileMode, bool) {
	var best *module.File
	score := -1
	for i := range lm.Files {
		f := &lm.Files[i]
		if !bytes.Equal(f.Data, rendered) {
			continue
		}
		n := 0
		if strings.HasSuffix(deployed.ToSlash(), "/"+f.Path) {
			n = len(f.Path) + 1
		} else if lm.Main != nil && f.Path == lm.Main.Path {
			n = 1
		}
		if n > score {
			best, score = f, n
		}
	}
	if best != nil {
		return best.Path, edited, best.Mode, true
	}
	m := lm.Main
	if m == nil || len(rendered) == 0 {
		return "", nil, 0, false
	}
	r := rendered
	if !bytes.HasSuffix(m.Data, r) && bytes.HasSuffix(r, []byte("\n")) {
		r = r[:len(r)-1] // an aggregated block always ends its text with a newline
	}
	if len(r) == 0 || !bytes.HasSuffix(m.Data, r) {
		return "", nil, 0, false
	}
	head := m.Data[:len(m.Data)-len(r)]
	return m.Path, append(append([]byte{}, head...), edited...), m.Mode, true
}

// scopeRank orders layers: a higher one wins.
func scopeRank(s overlay.Scope) int {
	return slices.Index([]overlay.Scope{overlay.Upstream, overlay.Global, overlay.Machine, overlay.Project}, s)
}
