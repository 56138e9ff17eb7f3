package manifest

import (
	"slices"
	"strconv"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"go.yaml.in/yaml/v3"
)

// AppendModule returns the file with mod's lines added after the last
// module; nothing else changes. m is the manifest parsed from the same file:
// the edit must keep its modules (plus mod) and its profiles.
func (md *Doc) AppendModule(m *Manifest, mod module.Module) ([]byte, error) {
	if err := module.ValidateID(mod.ID, mod.Type); err != nil {
		return nil, apperr.New(apperr.ConfigInvalid, "module id %q %v", mod.ID, err).WithHint("%s", module.IDHint).With("module_id", mod.ID)
	}
	data, err := md.appendModule(mod)
	if err != nil {
		return nil, err
	}
	if err := md.checkEdit(data, append(moduleIDs(m), mod.ID), m.Profiles); err != nil {
		return nil, err
	}
	return data, nil
}

// checkEdit parses an edited manifest and checks that it has exactly the
// module ids wantIDs, in order, and the profiles wantProfiles: a text edit
// that went wrong is E_UNEXPECTED rather than a silently different file.
func (md *Doc) checkEdit(data []byte, wantIDs []string, wantProfiles map[string]Profile) error {
	got, err := Parse(data, md.known)
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
func (md *Doc) appendModule(mod module.Module) ([]byte, error) {
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
		list := md.List("modules")
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
func (md *Doc) keepFinalEOL(text string) []byte {
	if n := len(md.lines); n > 0 && !strings.HasSuffix(md.lines[n-1], "\n") {
		_, eol := splitEOL(text)
		text = text[:len(text)-len(eol)]
	}
	return []byte(text)
}

// itemIndent returns how a block sequence item is laid out: the text before
// its "-", and the indentation of its keys (the item node's column). The
// "-" is on the item's first line or, for "-" alone on a line, above it.
func (md *Doc) itemIndent(item *yaml.Node) (dash, indent string, ok bool) {
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
func (md *Doc) itemEnd(seq *yaml.Node, i int, item *yaml.Node) int {
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
func (md *Doc) itemStart(item *yaml.Node) int {
	start := item.Line
	for start > 1 && strings.HasPrefix(strings.TrimSpace(md.lines[start-2]), "#") {
		start--
	}
	return start
}

// nextTopLevelLine is the 1-based line of the first root key after line, or 0.
func (md *Doc) nextTopLevelLine(line int) int {
	root := md.Root()
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
