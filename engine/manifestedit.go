package engine

import (
	"bytes"
	"os"
	"strings"

	"github.com/agentpack/agentpack/engine/apperr"
	"go.yaml.in/yaml/v3"
)

// manifestDoc is agentpack.yaml as text plus its YAML node tree. Edits are
// made to the text at the lines the nodes point to, so everything else —
// comments, blank lines, quoting, flow style — stays byte for byte.
type manifestDoc struct {
	path  string
	doc   yaml.Node
	lines []string // the file split after each '\n'
}

func openManifestDoc(path string) (*manifestDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.ConfigMissing, "cannot read %s", path).WithHint("run `agentpack init` first")
	}
	md := &manifestDoc{path: path, lines: strings.SplitAfter(string(data), "\n")}
	if md.lines[len(md.lines)-1] == "" {
		md.lines = md.lines[:len(md.lines)-1]
	}
	if err := yaml.Unmarshal(data, &md.doc); err != nil {
		return nil, apperr.Wrap(err, apperr.ConfigInvalid, "YAML syntax error: %s", yamlMessage(err)).WithHint("fix agentpack.yaml first")
	}
	if len(md.doc.Content) != 1 || md.doc.Content[0].Kind != yaml.MappingNode {
		return nil, apperr.New(apperr.ConfigInvalid, "agentpack.yaml must be a mapping").WithHint("fix agentpack.yaml first")
	}
	return md, nil
}

func (md *manifestDoc) root() *yaml.Node { return md.doc.Content[0] }

// list returns the sequence under key, creating it when absent.
func (md *manifestDoc) list(key string) *yaml.Node {
	root := md.root()
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			v := root.Content[i+1]
			if v.Kind != yaml.SequenceNode {
				v.Kind, v.Tag, v.Value, v.Content, v.Style = yaml.SequenceNode, "!!seq", "", nil, 0
			}
			return v
		}
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, seq)
	return seq
}

// encode re-renders the whole node tree; used only when a text edit is not
// possible (a flow-style or missing list).
func (md *manifestDoc) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&md.doc); err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode agentpack.yaml")
	}
	_ = enc.Close()
	return buf.Bytes(), nil
}

// save re-renders the node tree after tree edits, then writes it.
func (md *manifestDoc) save(sys System) error {
	data, err := md.encode()
	if err != nil {
		return err
	}
	return md.saveBytes(sys, data)
}

// saveBytes re-validates data and writes it atomically.
func (md *manifestDoc) saveBytes(sys System, data []byte) error {
	if _, err := ParseManifest(data, Targets()); err != nil {
		return err
	}
	return sys.WriteFile(md.path, data, 0o644)
}

// value returns the node under key in the root mapping, or nil.
func (md *manifestDoc) value(key string) *yaml.Node {
	root := md.root()
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i+1]
		}
	}
	return nil
}

func itemID(n *yaml.Node, key string) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1].Value
		}
	}
	return ""
}

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
				if list.Kind != yaml.SequenceNode {
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

func moduleIDs(m *Manifest) []string {
	out := make([]string, len(m.Modules))
	for i, x := range m.Modules {
		out[i] = x.ID
	}
	return out
}
