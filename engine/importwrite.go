package engine

import (
	"path"
	"path/filepath"

	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"go.yaml.in/yaml/v3"
)

// write copies the module files, then adds the modules (and the imported
// profile) to agentpack.yaml. On failure the files written so far are
// removed.
func (ip *importPlanner) write() (err error) {
	sys := ip.e.Sys
	var written []string
	defer func() {
		if err != nil {
			for i := len(written) - 1; i >= 0; i-- {
				_ = sys.Remove(fsys.AbsPath(written[i]))
			}
		}
	}()
	for _, c := range ip.creates {
		for _, f := range c.files {
			p := c.dest
			if !c.single {
				p = filepath.Join(c.dest, filepath.FromSlash(path.Clean(f.Path)))
			}
			mode := f.Mode.Perm()
			if mode == 0 {
				mode = 0o644
			}
			if err := sys.WriteFile(fsys.AbsPath(p), f.Data, mode); err != nil {
				return err
			}
			written = append(written, p)
		}
	}
	md, err := manifest.OpenDoc(sys, abs(ip.m.Path), ip.e.Adapters.Names())
	if err != nil {
		return err
	}
	seq := blockList(md.List("modules"))
	for _, c := range ip.creates {
		var node yaml.Node
		if err := node.Encode(c.mod); err != nil {
			return apperr.Wrap(err, apperr.Unexpected, "cannot encode module %s", c.mod.ID)
		}
		flowLists(&node)
		seq.Content = append(seq.Content, &node)
	}
	if profiles := mapGet(md.Root(), "profiles"); profiles != nil && mapGet(profiles, ImportProfile) == nil {
		var node yaml.Node
		_ = node.Encode(manifest.Profile{IncludeTags: []string{ImportTag}})
		node.Style = yaml.FlowStyle
		flowLists(&node)
		profiles.Content = append(profiles.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ImportProfile}, &node)
	}
	return md.Save(sys)
}

// blockList makes a list written as `[]` take block items, so appended
// entries are written one per line.
func blockList(seq *yaml.Node) *yaml.Node {
	if seq.Style&yaml.FlowStyle != 0 {
		seq.Style &^= yaml.FlowStyle
	}
	return seq
}

// flowLists writes lists of scalars in flow style ([a, b]).
func flowLists(n *yaml.Node) {
	if n.Kind == yaml.SequenceNode {
		flow := true
		for _, c := range n.Content {
			flow = flow && c.Kind == yaml.ScalarNode
		}
		if flow {
			n.Style = yaml.FlowStyle
		}
	}
	for _, c := range n.Content {
		flowLists(c)
	}
}
