package engine

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"go.yaml.in/yaml/v3"
)

// AddData is the data of `agentpack add`.
type AddData struct {
	Module            module.Module `json:"module"`
	ManifestPath      string        `json:"manifest_path"`
	ManifestPathPosix string        `json:"manifest_path_posix"`
}

// WithEditLock checks the environment ([Env.Check]) and runs fn, an edit
// of the desired-state repo, under the state lock that every mutating
// command takes (SPEC §2), so concurrent edits serialise and each re-reads
// agentpack.yaml under it; the lock also rolls back an interrupted apply
// first (SPEC §6). It runs fn directly when this engine already holds the
// lock, and without the lock when its System only records: a dry run writes
// nothing, not even the lock file.
func (e *Engine) WithEditLock(command string, fn func(recovered []string) error) error {
	if e.locked {
		return fn(nil) // nested in an operation that holds the lock
	}
	_, dryRun := e.Sys.(*DryRunSystem)
	return e.maybeLock(dryRun, command, fn)
}

// AddModule appends mod to the request's agentpack.yaml under the state
// lock; only the new module's lines are added.
func (e *Engine) AddModule(req Request, mod module.Module) (*AddData, error) {
	var out *AddData
	err := e.WithEditLock("add", func([]string) error {
		var err error
		out, err = e.addModule(req, mod)
		return err
	})
	return out, err
}

func (e *Engine) addModule(req Request, mod module.Module) (*AddData, error) {
	m, _, err := e.LoadManifest(req)
	if err != nil {
		return nil, err
	}
	for _, x := range m.Modules {
		if x.ID == mod.ID {
			return nil, apperr.New(apperr.ModuleAlreadyExists, "module %q already exists", mod.ID).
				WithHint("pick another --id, or `agentpack remove %s` first", mod.ID).With("id", mod.ID)
		}
	}
	md, err := openManifestDoc(m.Path, e.Adapters.Names())
	if err != nil {
		return nil, err
	}
	data, err := md.appendModule(mod)
	if err != nil {
		return nil, err
	}
	if err := md.checkEdit(data, append(moduleIDs(m), mod.ID), m.Profiles); err != nil {
		return nil, err
	}
	if err := md.saveBytes(e.Sys, data); err != nil {
		return nil, err
	}
	if mod.Tags == nil {
		mod.Tags = []string{}
	}
	if mod.Targets == nil {
		mod.Targets = []string{}
	}
	return &AddData{Module: mod, ManifestPath: m.Path, ManifestPathPosix: toSlash(m.Path)}, nil
}

// checkEdit parses an edited manifest and checks that it has exactly the
// module ids wantIDs, in order, and the profiles wantProfiles: a text edit
// that went wrong is E_UNEXPECTED rather than a silently different file.
func (md *manifestDoc) checkEdit(data []byte, wantIDs []string, wantProfiles map[string]Profile) error {
	got, err := ParseManifest(data, md.known)
	if err != nil {
		return err
	}
	if ids := moduleIDs(got); !slices.Equal(ids, wantIDs) {
		return apperr.New(apperr.Unexpected, "editing agentpack.yaml would leave modules [%s], want [%s]; nothing written",
			strings.Join(ids, ", "), strings.Join(wantIDs, ", ")).WithHint("edit agentpack.yaml by hand")
	}
	if len(got.Profiles) != len(wantProfiles) {
		return apperr.New(apperr.Unexpected, "editing agentpack.yaml would change its profiles; nothing written").WithHint("edit agentpack.yaml by hand")
	}
	for name, want := range wantProfiles {
		p, ok := got.Profiles[name]
		if !ok || !slices.Equal(p.IncludeTags, want.IncludeTags) || !slices.Equal(p.IncludeModules, want.IncludeModules) ||
			!slices.Equal(p.ExcludeModules, want.ExcludeModules) {
			return apperr.New(apperr.Unexpected, "editing agentpack.yaml would change profile %q; nothing written", name).WithHint("edit agentpack.yaml by hand")
		}
	}
	return nil
}

// appendModule returns the file with mod's lines inserted after the last
// module of a block-style modules list.
func (md *manifestDoc) appendModule(mod module.Module) ([]byte, error) {
	seq := md.value("modules")
	last := -1
	if seq != nil && seq.Kind == yaml.SequenceNode && seq.Style&yaml.FlowStyle == 0 {
		last = len(seq.Content) - 1
	}
	var dash, indent string
	ok := last >= 0
	if ok {
		dash, indent, ok = md.itemIndent(seq.Content[last])
	}
	if !ok {
		// No block list to extend: edit the tree and re-render it.
		var node yaml.Node
		if err := node.Encode(mod); err != nil {
			return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode module")
		}
		list := md.list("modules")
		list.Style = 0
		list.Content = append(list.Content, &node)
		data, err := md.encode()
		if err != nil {
			return nil, err
		}
		return md.withEOL(data), nil
	}
	eol := md.eol()
	at := md.itemEnd(seq, last, seq.Content[last])
	block := renderModule(dash, indent, mod)
	for i, l := range block {
		block[i] = strings.TrimSuffix(l, "\n") + eol
	}
	out := append(append(append([]string{}, md.lines[:at]...), block...), md.lines[at:]...)
	if at > 0 && !strings.HasSuffix(md.lines[at-1], "\n") {
		out[at-1] += eol
	}
	return md.keepFinalEOL(strings.Join(out, "")), nil
}

// keepFinalEOL drops the final line break of an edited text when the file
// had none, so edits near the end keep the file's style.
func (md *manifestDoc) keepFinalEOL(text string) []byte {
	if n := len(md.lines); n > 0 && !strings.HasSuffix(md.lines[n-1], "\n") {
		_, eol := splitEOL(text)
		text = text[:len(text)-len(eol)]
	}
	return []byte(text)
}

// itemIndent returns how a block sequence item is laid out: the text before
// its "-", and the indentation of its keys (the item node's column). The
// "-" is on the item's first line or, for "-" alone on a line, above it.
func (md *manifestDoc) itemIndent(item *yaml.Node) (dash, indent string, ok bool) {
	if item.Kind != yaml.MappingNode || item.Column < 3 {
		return "", "", false
	}
	off, ok := md.colOffset(item.Line, item.Column)
	if !ok {
		return "", "", false
	}
	text := md.lines[item.Line-1][:off]
	if item.Line == 1 {
		text = strings.TrimPrefix(text, "\uFEFF")
	}
	i := strings.LastIndexByte(text, '-')
	for l := item.Line - 1; i < 0 && l >= 1; l-- {
		t := strings.TrimSpace(md.lines[l-1])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if t != "-" && !strings.HasPrefix(t, "- #") && !strings.HasPrefix(t, "-\t#") {
			break
		}
		text = md.lines[l-1]
		if l == 1 {
			text = strings.TrimPrefix(text, "\uFEFF")
		}
		i = strings.IndexByte(text, '-')
	}
	if i < 0 || strings.Trim(text[:i], " ") != "" || i+3 > item.Column {
		return "", "", false
	}
	return text[:i], strings.Repeat(" ", item.Column-1), true
}

// itemEnd returns the index (0-based, exclusive) of the line after item i of
// seq: up to the next item's own lines, or to the end of the list (never
// past a document marker), not counting trailing blank lines and comments
// (they belong to what follows).
func (md *manifestDoc) itemEnd(seq *yaml.Node, i int, item *yaml.Node) int {
	limit := len(md.lines)
	if i+1 < len(seq.Content) {
		limit = md.itemStart(seq.Content[i+1]) - 1
	} else if next := md.nextTopLevelLine(item.Line); next > 0 {
		limit = next - 1
	}
	for l := item.Line; l < limit; l++ {
		if isDocMarker(md.lines[l]) {
			limit = l
			break
		}
	}
	end := limit
	for end > item.Line {
		t := strings.TrimSpace(md.lines[end-1])
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		end--
	}
	return end
}

// itemStart returns the 1-based first line of an item: its "- " line, or the
// comment lines right above it.
func (md *manifestDoc) itemStart(item *yaml.Node) int {
	start := item.Line
	for start > 1 && strings.HasPrefix(strings.TrimSpace(md.lines[start-2]), "#") {
		start--
	}
	return start
}

// nextTopLevelLine is the 1-based line of the first root key after line, or 0.
func (md *manifestDoc) nextTopLevelLine(line int) int {
	root := md.root()
	best := 0
	for i := 0; i < len(root.Content); i += 2 {
		if l := root.Content[i].Line; l > line && (best == 0 || l < best) {
			best = l
		}
	}
	return best
}

// renderModule renders mod as a block sequence item: dash is the text before
// the "-", in the indentation of the item's keys.
func renderModule(dash, in string, mod module.Module) []string {
	out := []string{dash + "-" + strings.Repeat(" ", len(in)-len(dash)-1) + "id: " + yamlScalar(mod.ID) + "\n", in + "type: " + yamlScalar(string(mod.Type)) + "\n"}
	if len(mod.Tags) > 0 {
		out = append(out, in+"tags: "+yamlFlowList(mod.Tags)+"\n")
	}
	if len(mod.Targets) > 0 {
		out = append(out, in+"targets: "+yamlFlowList(mod.Targets)+"\n")
	}
	out = append(out, in+"source:\n")
	src := mod.Source
	switch {
	case src.LocalPath != nil:
		out = append(out, in+"  local_path:\n", in+"    path: "+yamlScalar(src.LocalPath.Path)+"\n")
	case src.Git != nil:
		out = append(out, in+"  git:\n", in+"    url: "+yamlScalar(src.Git.URL)+"\n")
		if src.Git.Ref != "" {
			out = append(out, in+"    ref: "+yamlScalar(src.Git.Ref)+"\n")
		}
		if src.Git.Subdir != "" {
			out = append(out, in+"    subdir: "+yamlScalar(src.Git.Subdir)+"\n")
		}
	case src.Package != nil:
		out = append(out, in+"  package:\n", in+"    name: "+yamlScalar(src.Package.Name)+"\n")
		if src.Package.Version != "" {
			out = append(out, in+"    version: "+yamlScalar(src.Package.Version)+"\n")
		}
		if src.Package.Artifact != "" {
			out = append(out, in+"    artifact: "+yamlScalar(src.Package.Artifact)+"\n")
		}
	}
	return out
}

// yamlScalar renders s as a YAML scalar, quoted only when it must be.
func yamlScalar(s string) string {
	b, err := yaml.Marshal(s)
	if err != nil {
		return `"` + s + `"`
	}
	return strings.TrimSuffix(string(b), "\n")
}

// yamlFlowList renders items as a one-line flow sequence, quoting the
// items that must be quoted there (flow indicators, quotes, ...).
func yamlFlowList(items []string) string {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, x := range items {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x})
	}
	b, err := yaml.Marshal(seq)
	if err != nil || strings.Count(string(b), "\n") != 1 {
		q := make([]string, len(items))
		for i, x := range items {
			q[i] = strconv.Quote(x)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return strings.TrimSuffix(string(b), "\n")
}

// RemoveData is the data of `agentpack remove`.
type RemoveData struct {
	ID                string `json:"id"`
	ManifestPath      string `json:"manifest_path"`
	ManifestPathPosix string `json:"manifest_path_posix"`
}

// RemoveModule deletes a module's lines (with the comments right above it)
// and its mentions in profiles, under the state lock; the rest of the file
// is kept byte for byte.
func (e *Engine) RemoveModule(req Request, id string) (*RemoveData, error) {
	var out *RemoveData
	err := e.WithEditLock("remove", func([]string) error {
		var err error
		out, err = e.removeModule(req, id)
		return err
	})
	return out, err
}

func (e *Engine) removeModule(req Request, id string) (*RemoveData, error) {
	m, _, err := e.LoadManifest(req)
	if err != nil {
		return nil, err
	}
	md, err := openManifestDoc(m.Path, e.Adapters.Names())
	if err != nil {
		return nil, err
	}
	seq := md.value("modules")
	idx := -1
	if seq != nil && seq.Kind == yaml.SequenceNode {
		for i, item := range seq.Content {
			if itemID(item, "id") == id {
				idx = i
			}
		}
	}
	if idx < 0 {
		return nil, apperr.New(apperr.ModuleNotFound, "no module %q in agentpack.yaml", id).
			WithHint("module ids: %s", strings.Join(moduleIDs(m), ", ")).With("id", id)
	}
	wantIDs := append(append([]string{}, moduleIDs(m)[:idx]...), moduleIDs(m)[idx+1:]...)
	wantProfiles := map[string]Profile{}
	for name, p := range m.Profiles {
		p.IncludeModules, p.ExcludeModules = without(p.IncludeModules, id), without(p.ExcludeModules, id)
		wantProfiles[name] = p
	}
	var data []byte
	if seq.Style&yaml.FlowStyle == 0 {
		if d, ok := md.removeLines(seq, idx, id); ok && md.checkEdit(d, wantIDs, wantProfiles) == nil {
			data = d
		}
	}
	if data == nil {
		// No text edit possible: edit the tree and re-render it.
		seq.Content = append(seq.Content[:idx], seq.Content[idx+1:]...)
		removeFromProfiles(md.root(), id)
		if data, err = md.encode(); err != nil {
			return nil, err
		}
		data = md.withEOL(data)
		if err := md.checkEdit(data, wantIDs, wantProfiles); err != nil {
			return nil, err
		}
	}
	if err := md.saveBytes(e.Sys, data); err != nil {
		return nil, err
	}
	return &RemoveData{ID: id, ManifestPath: m.Path, ManifestPathPosix: toSlash(m.Path)}, nil
}

func without(list []string, id string) []string {
	var out []string
	for _, x := range list {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// lineEdit replaces lines [from, to) (0-based) with repl.
type lineEdit struct {
	from, to int
	repl     []string
}

// removeLines returns the file without module idx of the block list seq and
// without id in the profiles; ok is false when the text cannot be edited in
// place.
func (md *manifestDoc) removeLines(seq *yaml.Node, idx int, id string) ([]byte, bool) {
	item := seq.Content[idx]
	from, to := md.itemStart(item)-1, md.itemEnd(seq, idx, item)
	// Drop one blank line left dangling above the removed block.
	if from > 0 && strings.TrimSpace(md.lines[from-1]) == "" && (to >= len(md.lines) || strings.TrimSpace(md.lines[to]) == "") {
		from--
	}
	edits := []lineEdit{{from, to, nil}}
	if len(seq.Content) == 1 {
		// `modules:` with no items is null, not a list.
		ed, ok := md.emptyListLine(md.key("modules"))
		if !ok {
			return nil, false
		}
		edits = append(edits, ed)
	}
	pe, ok := md.profileEdits(id)
	if !ok {
		return nil, false
	}
	edits = append(edits, pe...)
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	for i := 1; i < len(edits); i++ {
		if edits[i].to > edits[i-1].from {
			return nil, false // overlapping edits
		}
	}
	lines := append([]string{}, md.lines...)
	for _, ed := range edits {
		lines = append(lines[:ed.from], append(ed.repl, lines[ed.to:]...)...)
	}
	return md.keepFinalEOL(strings.Join(lines, "")), true
}

// profileEdits removes id from every profile's include_modules and
// exclude_modules lists (never include_tags: it names tags).
func (md *manifestDoc) profileEdits(id string) ([]lineEdit, bool) {
	profiles := md.value("profiles")
	if profiles == nil || profiles.Kind != yaml.MappingNode {
		return nil, true
	}
	byLine := map[int][]*yaml.Node{}
	var edits []lineEdit
	for j := 1; j < len(profiles.Content); j += 2 {
		p := profiles.Content[j]
		for k := 0; k+1 < len(p.Content); k += 2 {
			key, list := p.Content[k], p.Content[k+1]
			if list.Kind != yaml.SequenceNode || !slices.Contains(profileModuleKeys, key.Value) {
				continue
			}
			n := 0
			for _, x := range list.Content {
				if x.Value != id {
					continue
				}
				n++
				if list.Style&yaml.FlowStyle != 0 {
					byLine[x.Line] = append(byLine[x.Line], x)
				} else {
					edits = append(edits, lineEdit{x.Line - 1, x.Line, nil})
				}
			}
			if n > 0 && n == len(list.Content) && list.Style&yaml.FlowStyle == 0 {
				// A block list left with no items is null: make it [].
				ed, ok := md.emptyListLine(key)
				if !ok {
					return nil, false
				}
				edits = append(edits, ed)
			}
		}
	}
	for l, nodes := range byLine {
		text := md.lines[l-1]
		sort.Slice(nodes, func(a, b int) bool { return nodes[a].Column > nodes[b].Column })
		for _, n := range nodes {
			start, ok := md.colOffset(l, n.Column)
			if !ok {
				return nil, false
			}
			if text, ok = cutFlowItem(text, start, n); !ok {
				return nil, false
			}
		}
		if strings.TrimSpace(text) == "" {
			// The item had the line to itself (a multi-line flow list).
			edits = append(edits, lineEdit{l - 1, l, nil})
		} else {
			edits = append(edits, lineEdit{l - 1, l, []string{text}})
		}
	}
	return edits, true
}

// cutFlowItem removes the scalar n, whose token starts at byte start, and one
// separating comma from a flow-sequence line; ok is false when the token is
// not all on the line.
func cutFlowItem(line string, start int, n *yaml.Node) (string, bool) {
	end, ok := scalarEnd(line, start, n)
	if !ok {
		return line, false
	}
	rest := strings.TrimLeft(line[end:], " \t")
	if strings.HasPrefix(rest, ",") {
		end = len(line) - len(rest) + 1
		if next := strings.TrimLeft(rest[1:], " \t"); !strings.HasPrefix(next, "#") {
			end = len(line) - len(next) // keep the space before a comment
		}
	} else {
		before := strings.TrimRight(line[:start], " \t")
		if strings.HasSuffix(before, ",") {
			start = len(strings.TrimRight(before[:len(before)-1], " \t"))
		}
	}
	return line[:start] + line[end:], true
}
