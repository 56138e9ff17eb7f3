package manifest

import (
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/lazyregexp"
	"go.yaml.in/yaml/v3"
)

// PackageEntry is one directly installed package of the top-level
// `packages:` list.
type PackageEntry struct {
	Name    string `yaml:"name" json:"name"`
	Version string `yaml:"version,omitempty" json:"version"`
	// Tags and Targets are given to every module the package expands into.
	Tags    []string `yaml:"tags,omitempty" json:"tags"`
	Targets []string `yaml:"targets,omitempty" json:"targets"`
	// Artifacts limits the package to these artifact names (empty: all).
	Artifacts []string `yaml:"artifacts,omitempty" json:"artifacts"`
	// Line is the entry's line in the file.
	Line int `yaml:"-" json:"-"`
}

var pkgNameRe = lazyregexp.New(`^(@[a-z0-9][a-z0-9_-]{0,63}/)?[a-z0-9][a-z0-9-]{0,63}$`)

// FindPackage returns the entry named name, or nil.
func (m *Manifest) FindPackage(name string) *PackageEntry {
	for i := range m.Packages {
		if m.Packages[i].Name == name {
			return &m.Packages[i]
		}
	}
	return nil
}

func (m *Manifest) validatePackages(knownTargets []string) error {
	seen := map[string]int{}
	for i, p := range m.Packages {
		if !pkgNameRe.MatchString(p.Name) {
			return configErr(p.Line, "packages[%d]: invalid package name %q", i, p.Name).
				WithHint("package names are lowercase, optionally scoped: @scope/name")
		}
		if l, ok := seen[p.Name]; ok {
			return configErr(p.Line, "package %q is listed twice (first at line %d)", p.Name, l).WithHint("keep one entry per package")
		}
		seen[p.Name] = p.Line
		for _, t := range p.Targets {
			if !slices.Contains(knownTargets, t) {
				return apperr.New(apperr.TargetUnsupported, "package %q names unknown target %q", p.Name, t).
					WithHint("supported targets: %s", strings.Join(knownTargets, ", ")).With("line", p.Line)
			}
		}
	}
	return nil
}

// UpsertPackage returns the file with entry p added to the `packages:`
// list, or replacing the entry of the same name; the rest of the file is
// kept byte for byte when the list is a block list (or absent).
func (md *Doc) UpsertPackage(m *Manifest, p PackageEntry) ([]byte, error) {
	want := []string{}
	found := false
	for _, e := range m.Packages {
		want = append(want, e.Name)
		found = found || e.Name == p.Name
	}
	if !found {
		want = append(want, p.Name)
	}
	data, err := md.upsertPackage(p)
	if err != nil {
		return nil, err
	}
	return data, md.checkPackages(data, m, want)
}

func (md *Doc) upsertPackage(p PackageEntry) ([]byte, error) {
	seq := md.value("packages")
	eol := md.eol()
	if seq == nil && md.key("packages") == nil {
		// No list yet: add one at the end of the file.
		block := append([]string{"packages:\n"}, renderPackage("  ", "    ", p)...)
		text := strings.Join(md.lines, "")
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += eol
		}
		for _, l := range block {
			text += strings.TrimSuffix(l, "\n") + eol
		}
		return []byte(text), nil
	}
	if seq != nil && seq.Kind == yaml.SequenceNode && seq.Style&yaml.FlowStyle == 0 && len(seq.Content) > 0 {
		idx := -1
		for i, item := range seq.Content {
			if ItemField(item, "name") == p.Name {
				idx = i
			}
		}
		ref := seq.Content[len(seq.Content)-1]
		if idx >= 0 {
			ref = seq.Content[idx]
		}
		if dash, indent, ok := md.itemIndent(ref); ok {
			block := renderPackage(dash, indent, p)
			for i, l := range block {
				block[i] = strings.TrimSuffix(l, "\n") + eol
			}
			var out []string
			if idx >= 0 {
				from, to := ref.Line-1, md.itemEnd(seq, idx, ref)
				out = append(append(append([]string{}, md.lines[:from]...), block...), md.lines[to:]...)
			} else {
				at := md.itemEnd(seq, len(seq.Content)-1, ref)
				out = append(append(append([]string{}, md.lines[:at]...), block...), md.lines[at:]...)
				if at > 0 && !strings.HasSuffix(md.lines[at-1], "\n") {
					out[at-1] += eol
				}
			}
			return md.keepFinalEOL(strings.Join(out, "")), nil
		}
	}
	// Flow style, empty or odd layout: edit the tree and re-render it.
	list := md.List("packages")
	var node yaml.Node
	if err := node.Encode(p); err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode package entry")
	}
	replaced := false
	for i, item := range list.Content {
		if ItemField(item, "name") == p.Name {
			list.Content[i], replaced = &node, true
		}
	}
	if !replaced {
		list.Content = append(list.Content, &node)
	}
	list.Style = 0
	data, err := md.encode()
	if err != nil {
		return nil, err
	}
	return md.withEOL(data), nil
}

// RemovePackage returns the file without the entry named name.
func (md *Doc) RemovePackage(m *Manifest, name string) ([]byte, error) {
	var want []string
	for _, e := range m.Packages {
		if e.Name != name {
			want = append(want, e.Name)
		}
	}
	seq := md.value("packages")
	idx := -1
	if seq != nil && seq.Kind == yaml.SequenceNode {
		for i, item := range seq.Content {
			if ItemField(item, "name") == name {
				idx = i
			}
		}
	}
	if idx < 0 {
		return nil, apperr.New(apperr.PackageNotInstalled, "package %s is not in agentpack.yaml", name).
			WithHint("`agentpack list` shows the installed packages").With("package", name)
	}
	if seq.Style&yaml.FlowStyle == 0 && len(seq.Content) > 1 {
		item := seq.Content[idx]
		from, to := md.itemStart(item)-1, md.itemEnd(seq, idx, item)
		lines := append(append([]string{}, md.lines[:from]...), md.lines[to:]...)
		data := md.keepFinalEOL(strings.Join(lines, ""))
		if md.checkPackages(data, m, want) == nil {
			return data, nil
		}
	}
	seq.Content = append(seq.Content[:idx], seq.Content[idx+1:]...)
	seq.Style = yaml.FlowStyle
	if len(seq.Content) > 0 {
		seq.Style = 0
	}
	data, err := md.encode()
	if err != nil {
		return nil, err
	}
	data = md.withEOL(data)
	return data, md.checkPackages(data, m, want)
}

// checkPackages parses an edited file and checks that its packages are
// want and its modules unchanged.
func (md *Doc) checkPackages(data []byte, m *Manifest, want []string) error {
	got, err := Parse(data, md.known)
	if err != nil {
		return err
	}
	var names []string
	for _, p := range got.Packages {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, want) || !slices.Equal(moduleIDs(got), moduleIDs(m)) {
		return apperr.New(apperr.Unexpected, "editing agentpack.yaml would leave packages [%s], want [%s]; nothing written",
			strings.Join(names, ", "), strings.Join(want, ", ")).WithHint("edit agentpack.yaml by hand")
	}
	return nil
}

func renderPackage(dash, in string, p PackageEntry) []string {
	out := []string{dash + "-" + strings.Repeat(" ", max(1, len(in)-len(dash)-1)) + "name: " + yamlScalar(p.Name) + "\n"}
	if p.Version != "" {
		out = append(out, in+"version: "+yamlScalar(p.Version)+"\n")
	}
	if len(p.Tags) > 0 {
		out = append(out, in+"tags: "+yamlFlowList(p.Tags)+"\n")
	}
	if len(p.Targets) > 0 {
		out = append(out, in+"targets: "+yamlFlowList(p.Targets)+"\n")
	}
	if len(p.Artifacts) > 0 {
		out = append(out, in+"artifacts: "+yamlFlowList(p.Artifacts)+"\n")
	}
	return out
}
