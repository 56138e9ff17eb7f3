package manifest

import (
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"go.yaml.in/yaml/v3"
)

// RemoveModule returns the file without module id's lines (and the
// comments right above it) and without id in the profiles' module lists;
// the rest is kept byte for byte, or the tree is re-rendered when the text
// cannot be edited in place. m is the manifest parsed from the same file.
func (md *Doc) RemoveModule(m *Manifest, id string) ([]byte, error) {
	seq := md.value("modules")
	idx := -1
	if seq != nil && seq.Kind == yaml.SequenceNode {
		for i, item := range seq.Content {
			if ItemField(item, "id") == id {
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
	var err error
	if seq.Style&yaml.FlowStyle == 0 {
		if d, ok := md.removeLines(seq, idx, id); ok && md.checkEdit(d, wantIDs, wantProfiles) == nil {
			data = d
		}
	}
	if data == nil {
		// No text edit possible: edit the tree and re-render it.
		seq.Content = append(seq.Content[:idx], seq.Content[idx+1:]...)
		removeFromProfiles(md.Root(), id)
		if data, err = md.encode(); err != nil {
			return nil, err
		}
		data = md.withEOL(data)
		if err := md.checkEdit(data, wantIDs, wantProfiles); err != nil {
			return nil, err
		}
	}
	return data, nil
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
func (md *Doc) removeLines(seq *yaml.Node, idx int, id string) ([]byte, bool) {
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
func (md *Doc) profileEdits(id string) ([]lineEdit, bool) {
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

// emptyListLine rewrites the line of the root-level or profile key whose
// block list loses its last item as `key: []`, keeping a trailing comment.
func (md *Doc) emptyListLine(key *yaml.Node) (lineEdit, bool) {
	start, ok := md.colOffset(key.Line, key.Column)
	if !ok {
		return lineEdit{}, false
	}
	text, eol := splitEOL(md.lines[key.Line-1])
	end, ok := scalarEnd(text, start, key)
	if !ok {
		return lineEdit{}, false
	}
	rest := strings.TrimLeft(text[end:], " \t")
	if !strings.HasPrefix(rest, ":") {
		return lineEdit{}, false
	}
	colon := len(text) - len(rest)
	after := rest[1:]
	comment := strings.TrimLeft(after, " \t")
	switch {
	case comment == "":
		after = ""
	case !strings.HasPrefix(comment, "#") || comment == after:
		return lineEdit{}, false // an anchor, a tag, or not a comment
	}
	return lineEdit{key.Line - 1, key.Line, []string{text[:colon+1] + " []" + after + eol}}, true
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

// profileModuleKeys are the profile keys that name modules; include_tags
// names tags and is never edited when a module goes.
var profileModuleKeys = []string{"include_modules", "exclude_modules"}

func removeFromProfiles(root *yaml.Node, id string) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "profiles" || root.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		profiles := root.Content[i+1]
		for j := 1; j < len(profiles.Content); j += 2 {
			p := profiles.Content[j]
			for k := 0; k+1 < len(p.Content); k += 2 {
				list := p.Content[k+1]
				if list.Kind != yaml.SequenceNode || !slices.Contains(profileModuleKeys, p.Content[k].Value) {
					continue
				}
				kept := list.Content[:0]
				for _, x := range list.Content {
					if x.Value != id {
						kept = append(kept, x)
					}
				}
				list.Content = kept
			}
		}
	}
}
