package manifest

import (
	"fmt"
	"path"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"go.yaml.in/yaml/v3"
)

// checkModuleIDs refuses an id that is not `<type>:<name>` with the
// module's own type and a portable name ([module.ValidateID]), and two ids
// of one type whose names differ in case alone: on macOS and Windows they
// deploy to the same folder. It runs after the other module checks, so a
// duplicate id or an unknown type is reported as such.
func (m *Manifest) checkModuleIDs(root *yaml.Node) error {
	seq := valueOfKey(root, "modules")
	first := map[string]int{}
	for i := range m.Modules {
		mod := &m.Modules[i]
		key := fmt.Sprintf("modules[%d].id", i)
		line := itemLine(seq, i, "id", m.Lines[mod.ID])
		if err := module.ValidateID(mod.ID, mod.Type); err != nil {
			return configErr(line, "%s: module id %q %v", key, mod.ID, err).WithHint("%s", module.IDHint).
				With("key", key).With("module_id", mod.ID)
		}
		folder := string(mod.Type) + ":" + strings.ToLower(mod.Name())
		if j, ok := first[folder]; ok {
			other := m.Modules[j].ID
			return configErr(line, "%s: module id %q collides with %q (line %d): on a case-insensitive file system both deploy to the same place",
				key, mod.ID, other, itemLine(seq, j, "id", m.Lines[other])).
				WithHint("rename one of the two modules; ids of one type must differ in more than letter case").
				With("key", key).With("module_id", mod.ID).With("other_module_id", other)
		}
		first[folder] = i
	}
	return nil
}

// warnLocalPaths warns about a source.local_path that is absolute (or
// under ~) or leads out of the repo: the repo then works only on machines
// that have that path. It is not refused, as `add` records such a path
// on purpose (with the same warning).
func (m *Manifest) warnLocalPaths(root *yaml.Node) {
	seq := valueOfKey(root, "modules")
	for i := range m.Modules {
		mod := &m.Modules[i]
		lp := mod.Source.LocalPath
		if lp == nil || lp.Path == "" {
			continue
		}
		var why string
		switch p := strings.ReplaceAll(lp.Path, `\`, "/"); {
		case isAbsOrHome(p):
			why = "is absolute"
		case path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../"):
			why = "leaves the repo"
		default:
			continue
		}
		m.Warnings = append(m.Warnings, fmt.Sprintf("agentpack.yaml line %d: module %q: source.local_path.path %q %s: the repo works only on machines that have that path",
			itemLine(seq, i, "source", m.Lines[mod.ID]), mod.ID, lp.Path, why))
	}
}

// isAbsOrHome reports whether p ('/'-separated) is absolute on any
// platform (/x, //server, C:/x) or starts at the home folder (~, ~/x).
func isAbsOrHome(p string) bool {
	if strings.HasPrefix(p, "/") || p == "~" || strings.HasPrefix(p, "~/") {
		return true
	}
	drive := len(p) >= 3 && p[1] == ':' && p[2] == '/'
	return drive && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
}

// valueOfKey returns the value under key in the mapping root, or nil.
func valueOfKey(root *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i+1]
		}
	}
	return nil
}

// itemLine is the line of key's value in the i-th item of seq, else of
// the item, else def.
func itemLine(seq *yaml.Node, i int, key string, def int) int {
	if seq == nil || seq.Kind != yaml.SequenceNode || i >= len(seq.Content) {
		return def
	}
	item := seq.Content[i]
	if item.Kind == yaml.MappingNode {
		if v := valueOfKey(item, key); v != nil {
			return v.Line
		}
	}
	return item.Line
}
