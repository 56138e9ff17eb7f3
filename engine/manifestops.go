package engine

import (
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/apperr"
	"go.yaml.in/yaml/v3"
)

// AddData is the data of `agentpack add`.
type AddData struct {
	Module            Module `json:"module"`
	ManifestPath      string `json:"manifest_path"`
	ManifestPathPosix string `json:"manifest_path_posix"`
}

// AddModule appends mod to the request's agentpack.yaml; only the new
// module's lines are added.
func (e *Engine) AddModule(req Request, mod Module) (*AddData, error) {
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
	md, err := openManifestDoc(m.Path)
	if err != nil {
		return nil, err
	}
	data, err := md.appendModule(mod)
	if err != nil {
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

// appendModule returns the file with mod's lines inserted after the last
// module of a block-style modules list.
func (md *manifestDoc) appendModule(mod Module) ([]byte, error) {
	seq := md.value("modules")
	if seq == nil || seq.Kind != yaml.SequenceNode || seq.Style&yaml.FlowStyle != 0 || len(seq.Content) == 0 {
		// No block list to extend: edit the tree and re-render it.
		var node yaml.Node
		if err := node.Encode(mod); err != nil {
			return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode module")
		}
		list := md.list("modules")
		list.Style = 0
		list.Content = append(list.Content, &node)
		return md.encode()
	}
	dash := strings.Repeat(" ", seq.Content[0].Column-3)
	last := seq.Content[len(seq.Content)-1]
	at := md.itemEnd(seq, len(seq.Content)-1, last)
	block := renderModule(dash, mod)
	out := append(append(append([]string{}, md.lines[:at]...), block...), md.lines[at:]...)
	if at > 0 && !strings.HasSuffix(md.lines[at-1], "\n") {
		out[at-1] += "\n"
	}
	return []byte(strings.Join(out, "")), nil
}

// itemEnd returns the index (0-based, exclusive) of the line after item i of
// seq: up to the next item's own lines, or to the end of the list, not
// counting trailing blank lines and comments (they belong to what follows).
func (md *manifestDoc) itemEnd(seq *yaml.Node, i int, item *yaml.Node) int {
	limit := len(md.lines)
	if i+1 < len(seq.Content) {
		limit = md.itemStart(seq.Content[i+1]) - 1
	} else if next := md.nextTopLevelLine(item.Line); next > 0 {
		limit = next - 1
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

func renderModule(dash string, mod Module) []string {
	in := dash + "  "
	out := []string{dash + "- id: " + yamlScalar(mod.ID) + "\n", in + "type: " + yamlScalar(string(mod.Type)) + "\n"}
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

func yamlFlowList(items []string) string {
	q := make([]string, len(items))
	for i, x := range items {
		q[i] = yamlScalar(x)
		if strings.ContainsAny(q[i], ",[]{}") && !strings.HasPrefix(q[i], `"`) && !strings.HasPrefix(q[i], `'`) {
			q[i] = `"` + x + `"`
		}
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// RemoveData is the data of `agentpack remove`.
type RemoveData struct {
	ID                string `json:"id"`
	ManifestPath      string `json:"manifest_path"`
	ManifestPathPosix string `json:"manifest_path_posix"`
}

// RemoveModule deletes a module's lines (with the comments right above it)
// and its mentions in profiles; the rest of the file is kept byte for byte.
func (e *Engine) RemoveModule(req Request, id string) (*RemoveData, error) {
	m, _, err := e.LoadManifest(req)
	if err != nil {
		return nil, err
	}
	md, err := openManifestDoc(m.Path)
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
	var data []byte
	if seq.Style&yaml.FlowStyle != 0 {
		seq.Content = append(seq.Content[:idx], seq.Content[idx+1:]...)
		removeFromProfiles(md.root(), id)
		if data, err = md.encode(); err != nil {
			return nil, err
		}
	} else {
		data = md.removeLines(seq, idx, id)
	}
	if err := md.saveBytes(e.Sys, data); err != nil {
		return nil, err
	}
	return &RemoveData{ID: id, ManifestPath: m.Path, ManifestPathPosix: toSlash(m.Path)}, nil
}

// lineEdit replaces lines [from, to) (0-based) with repl.
type lineEdit struct {
	from, to int
	repl     []string
}

func (md *manifestDoc) removeLines(seq *yaml.Node, idx int, id string) []byte {
	item := seq.Content[idx]
	from, to := md.itemStart(item)-1, md.itemEnd(seq, idx, item)
	// Drop one blank line left dangling above the removed block.
	if from > 0 && strings.TrimSpace(md.lines[from-1]) == "" && (to >= len(md.lines) || strings.TrimSpace(md.lines[to]) == "") {
		from--
	}
	edits := []lineEdit{{from, to, nil}}
	edits = append(edits, md.profileEdits(id)...)
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	lines := append([]string{}, md.lines...)
	for _, ed := range edits {
		lines = append(lines[:ed.from], append(ed.repl, lines[ed.to:]...)...)
	}
	return []byte(strings.Join(lines, ""))
}

// profileEdits removes id from every profile's include/exclude list.
func (md *manifestDoc) profileEdits(id string) []lineEdit {
	profiles := md.value("profiles")
	if profiles == nil || profiles.Kind != yaml.MappingNode {
		return nil
	}
	byLine := map[int][]*yaml.Node{}
	var block []int
	for j := 1; j < len(profiles.Content); j += 2 {
		p := profiles.Content[j]
		for k := 0; k+1 < len(p.Content); k += 2 {
			list := p.Content[k+1]
			if list.Kind != yaml.SequenceNode {
				continue
			}
			for _, x := range list.Content {
				if x.Value != id {
					continue
				}
				if list.Style&yaml.FlowStyle != 0 {
					byLine[x.Line] = append(byLine[x.Line], x)
				} else {
					block = append(block, x.Line)
				}
			}
		}
	}
	var edits []lineEdit
	for _, l := range block {
		edits = append(edits, lineEdit{l - 1, l, nil})
	}
	for l, nodes := range byLine {
		text := md.lines[l-1]
		sort.Slice(nodes, func(a, b int) bool { return nodes[a].Column > nodes[b].Column })
		for _, n := range nodes {
			text = cutFlowItem(text, n)
		}
		edits = append(edits, lineEdit{l - 1, l, []string{text}})
	}
	return edits
}

// cutFlowItem removes the scalar n (and one separating comma) from a
// flow-sequence line.
func cutFlowItem(line string, n *yaml.Node) string {
	start := n.Column - 1
	width := len(n.Value)
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
		width += 2
	}
	if start < 0 || start+width > len(line) {
		return line
	}
	end := start + width
	rest := strings.TrimLeft(line[end:], " ")
	if strings.HasPrefix(rest, ",") {
		end = len(line) - len(strings.TrimLeft(rest[1:], " "))
	} else {
		before := strings.TrimRight(line[:start], " ")
		if strings.HasSuffix(before, ",") {
			start = len(before) - 1
		}
	}
	return line[:start] + line[end:]
}
