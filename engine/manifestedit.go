package engine

import (
	"bytes"
	"os"
	"strings"

	"github.com/agentpack/agentpack/engine/apperr"
	"go.yaml.in/yaml/v3"
)

// manifestDoc is agentpack.yaml as a YAML node tree, so edits keep comments
// and key order.
type manifestDoc struct {
	path string
	doc  yaml.Node
}

func openManifestDoc(path string) (*manifestDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.ConfigMissing, "cannot read %s", path).WithHint("run `agentpack init` first")
	}
	md := &manifestDoc{path: path}
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

// save re-validates and writes the manifest atomically.
func (md *manifestDoc) save(sys System) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&md.doc); err != nil {
		return apperr.Wrap(err, apperr.Unexpected, "cannot encode agentpack.yaml")
	}
	_ = enc.Close()
	if _, err := ParseManifest(buf.Bytes(), Targets()); err != nil {
		return err
	}
	return sys.WriteFile(md.path, buf.Bytes(), 0o644)
}

func itemID(n *yaml.Node, key string) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// AddData is the data of `agentpack add`.
type AddData struct {
	Module            Module `json:"module"`
	ManifestPath      string `json:"manifest_path"`
	ManifestPathPosix string `json:"manifest_path_posix"`
}

// AddModule appends mod to the request's agentpack.yaml, keeping comments.
func (e *Engine) AddModule(req Request, mod Module) (*AddData, error) {
	m, repo, err := e.LoadManifest(req)
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
	var node yaml.Node
	if err := node.Encode(mod); err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode module")
	}
	seq := md.list("modules")
	seq.Content = append(seq.Content, &node)
	if err := md.save(e.Sys); err != nil {
		return nil, err
	}
	if mod.Tags == nil {
		mod.Tags = []string{}
	}
	if mod.Targets == nil {
		mod.Targets = []string{}
	}
	_ = repo
	return &AddData{Module: mod, ManifestPath: m.Path, ManifestPathPosix: toSlash(m.Path)}, nil
}

// RemoveData is the data of `agentpack remove`.
type RemoveData struct {
	ID                string `json:"id"`
	ManifestPath      string `json:"manifest_path"`
	ManifestPathPosix string `json:"manifest_path_posix"`
}

// RemoveModule deletes a module entry (and its mentions in profiles).
func (e *Engine) RemoveModule(req Request, id string) (*RemoveData, error) {
	m, _, err := e.LoadManifest(req)
	if err != nil {
		return nil, err
	}
	md, err := openManifestDoc(m.Path)
	if err != nil {
		return nil, err
	}
	seq := md.list("modules")
	found := false
	kept := seq.Content[:0]
	for _, item := range seq.Content {
		if itemID(item, "id") == id {
			found = true
			continue
		}
		kept = append(kept, item)
	}
	seq.Content = kept
	if !found {
		return nil, apperr.New(apperr.ModuleNotFound, "no module %q in agentpack.yaml", id).
			WithHint("module ids: %s", strings.Join(moduleIDs(m), ", ")).With("id", id)
	}
	removeFromProfiles(md.root(), id)
	if err := md.save(e.Sys); err != nil {
		return nil, err
	}
	return &RemoveData{ID: id, ManifestPath: m.Path, ManifestPathPosix: toSlash(m.Path)}, nil
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
