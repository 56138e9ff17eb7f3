package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/yamlerr"
	"go.yaml.in/yaml/v3"
)

// knownKeys lists the keys allowed in each known object; an unknown key is
// E_CONFIG_INVALID with its line. The top level only warns (forward
// compatibility with newer manifests).
var knownKeys = map[string][]string{
	"profile":    {"include_tags", "include_modules", "exclude_modules"},
	"target":     {"mode", "scope", "options"},
	"module":     {"id", "type", "enabled", "tags", "targets", "source", "metadata"},
	"source":     {"local_path", "git", "package"},
	"local_path": {"path"},
	"git":        {"url", "ref", "subdir", "shallow"},
	"package":    {"name", "version", "artifact", "registry"},
	"artifact":   {"name", "url", "ref", "path", "commit"},
	"pkgentry":   {"name", "version", "tags", "targets", "artifacts"},
}

var topLevelKeys = []string{"version", "profiles", "targets", "modules", "sources", "packages"}

// Load reads repo/agentpack.yaml with r and validates it. knownTargets is
// the set of registered target names.
func Load(r Reader, repo fsys.AbsPath, knownTargets []string) (*Manifest, error) {
	path := repo.JoinName(FileName)
	data, err := r.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, apperr.New(apperr.ConfigMissing, "no %s in %s", FileName, repo).
				WithHint("run `agentpack init` or pass --repo <dir>").With("path", path.String())
		}
		msg, hint := "cannot read "+path.String(), "check file permissions"
		var ioErr *apperr.Error
		if errors.As(err, &ioErr) {
			if cause, ok := ioErr.Details["cause"].(string); ok {
				msg += ": " + cause // "permission denied", "not a regular file"
			}
		}
		if errors.Is(err, fsys.ErrNotRegular) {
			hint = "replace it with a regular file (it is a FIFO, socket or device)"
		}
		return nil, apperr.Wrap(err, apperr.ConfigInvalid, "%s", msg).WithHint("%s", hint).With("path", path.String())
	}
	m, err := Parse(data, knownTargets)
	if err != nil {
		if ae, ok := err.(*apperr.Error); ok {
			ae.With("path", path.String())
			ae.Message = path.String() + ": " + ae.Message
		}
		return nil, err
	}
	m.Path, m.Dir = path.String(), repo.String()
	return m, nil
}

// Parse parses and validates manifest bytes.
func Parse(data []byte, knownTargets []string) (*Manifest, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, configErr(0, "the file is empty").WithHint("start from `agentpack init`")
		}
		return nil, apperr.Wrap(err, apperr.ConfigInvalid, "YAML syntax error: %s", yamlerr.Message(err)).
			WithHint("fix the YAML at the reported line").With("line", yamlerr.Line(err))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, configErr(root.Line, "the top level must be a mapping")
	}
	if err := checkUniqueKeys(root); err != nil {
		return nil, err
	}
	m := &Manifest{Lines: map[string]int{}}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if !slices.Contains(topLevelKeys, k.Value) {
			m.Warnings = append(m.Warnings, fmt.Sprintf("agentpack.yaml line %d: unknown top-level key %q ignored", k.Line, k.Value))
		}
	}
	if err := checkKeys(root, m); err != nil {
		return nil, err
	}
	if err := decodeKnown(root, m); err != nil {
		return nil, err
	}
	if err := m.validate(root, knownTargets); err != nil {
		return nil, err
	}
	return m, nil
}

// checkUniqueKeys refuses a top-level key given twice, with yaml's own
// message for a key repeated inside a module. Each known key is decoded on
// its own, so yaml's check never sees the top level, and plan would use the
// last list while add and remove edit the first.
func checkUniqueKeys(root *yaml.Node) error {
	first := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if line, ok := first[k.Value]; ok {
			return configErr(k.Line, "mapping key %q already defined at line %d", k.Value, line).
				WithHint("merge the two %q entries into one", k.Value).With("key", k.Value)
		}
		first[k.Value] = k.Line
	}
	return nil
}

// decodeKnown decodes only the known top-level keys, so unknown ones (already
// warned about) cannot fail the decode.
func decodeKnown(root *yaml.Node, m *Manifest) error {
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		var err error
		switch k.Value {
		case "version":
			err = v.Decode(&m.Version)
		case "profiles":
			err = v.Decode(&m.Profiles)
		case "targets":
			err = v.Decode(&m.Targets)
		case "modules":
			err = v.Decode(&m.Modules)
			for j, mod := range v.Content {
				if j < len(m.Modules) {
					m.Lines[m.Modules[j].ID] = mod.Line
				}
			}
		case "sources":
			err = v.Decode(&m.Sources)
		case "packages":
			err = v.Decode(&m.Packages)
			for j, item := range v.Content {
				if j < len(m.Packages) {
					m.Packages[j].Line = item.Line
				}
			}
		}
		if err != nil {
			return configErr(v.Line, "%s: %s", k.Value, yamlerr.Message(err)).WithHint("check the type of the value at that line")
		}
	}
	return nil
}

// checkKeys rejects unknown keys inside known objects.
func checkKeys(root *yaml.Node, m *Manifest) error {
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "version":
			if err := checkValue(v, topLevelTypes[k.Value], k.Value); err != nil {
				return err
			}
		case "profiles", "targets":
			if v.Kind != yaml.MappingNode {
				return typeErr(v, v, topLevelTypes[k.Value], k.Value)
			}
			kind := strings.TrimSuffix(k.Value, "s")
			for j := 0; j+1 < len(v.Content); j += 2 {
				if err := checkObject(v.Content[j+1], kind, k.Value+"."+v.Content[j].Value); err != nil {
					return err
				}
			}
		case "modules", "sources", "packages":
			if isNull(v) && k.Value == "packages" {
				continue
			}
			if v.Kind != yaml.SequenceNode {
				return typeErr(v, v, topLevelTypes[k.Value], k.Value)
			}
			kind := map[string]string{"modules": "module", "sources": "artifact", "packages": "pkgentry"}[k.Value]
			for j, item := range v.Content {
				if err := checkObject(item, kind, fmt.Sprintf("%s[%d]", k.Value, j)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkObject(n *yaml.Node, kind, where string) error {
	if n.Kind != yaml.MappingNode {
		if n.Tag == "!!null" {
			return nil
		}
		return typeErr(n, n, typeMapping, where)
	}
	allowed := knownKeys[kind]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(allowed, k.Value) {
			return configErr(k.Line, "unknown key %q in %s", k.Value, where).
				WithHint("allowed keys: %s", strings.Join(allowed, ", "))
		}
		if t, ok := keyTypes[kind][k.Value]; ok {
			if err := checkValue(v, t, where+"."+k.Value); err != nil {
				return err
			}
		}
		switch {
		case kind == "module" && k.Value == "source":
			if err := checkObject(v, "source", where+".source"); err != nil {
				return err
			}
		case kind == "source":
			if err := checkObject(v, k.Value, where+"."+k.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *Manifest) validate(root *yaml.Node, knownTargets []string) error {
	if m.Version != 1 {
		line := lineOfKey(root, "version")
		if m.Version == 0 {
			return configErr(line, "missing `version: 1`").WithHint("add `version: 1` at the top of agentpack.yaml")
		}
		return apperr.New(apperr.ConfigUnsupported, "unsupported manifest version %d (this agentpack reads version 1)", m.Version).
			WithHint("set `version: 1` or upgrade agentpack").With("line", line)
	}
	if _, ok := m.Profiles["default"]; !ok {
		return configErr(lineOfKey(root, "profiles"), "no `default` profile").
			WithHint("add `profiles: {default: {include_tags: [base]}}`")
	}
	for name, tc := range m.Targets {
		if !slices.Contains(knownTargets, name) {
			return apperr.New(apperr.TargetUnsupported, "unknown target %q in agentpack.yaml", name).
				WithHint("supported targets: %s", strings.Join(knownTargets, ", ")).With("target", name)
		}
		switch tc.Scope {
		case "", target.ScopeUser, target.ScopeProject, target.ScopeBoth:
		default:
			return configErr(0, "targets.%s.scope %q must be user, project or both", name, tc.Scope)
		}
		if tc.Mode != "" && tc.Mode != "files" {
			return configErr(0, "targets.%s.mode %q is not supported (only `files`)", name, tc.Mode)
		}
	}
	seen := map[string]bool{}
	for i := range m.Modules {
		mod := &m.Modules[i]
		line := m.Lines[mod.ID]
		if mod.ID == "" {
			return configErr(line, "modules[%d] has no id", i).WithHint("give every module a unique id such as `skill:review`")
		}
		if seen[mod.ID] {
			return configErr(line, "duplicate module id %q", mod.ID).WithHint("module ids must be unique")
		}
		seen[mod.ID] = true
		if !mod.Type.Valid() {
			return configErr(line, "module %q has unknown type %q", mod.ID, mod.Type).
				WithHint("types: %s", strings.Join(module.TypeNames(), ", "))
		}
		if n := mod.Source.Count(); n != 1 {
			return configErr(line, "module %q must have exactly one source (local_path, git or package), has %d", mod.ID, n).
				WithHint("set exactly one of source.local_path, source.git, source.package")
		}
		for _, t := range mod.Targets {
			if !slices.Contains(knownTargets, t) {
				return apperr.New(apperr.TargetUnsupported, "module %q names unknown target %q", mod.ID, t).
					WithHint("supported targets: %s", strings.Join(knownTargets, ", ")).With("line", line)
			}
		}
	}
	if err := m.checkModuleIDs(root); err != nil {
		return err
	}
	if err := m.validatePackages(knownTargets); err != nil {
		return err
	}
	m.warnLocalPaths(root)
	names := make([]string, 0, len(m.Profiles))
	for name := range m.Profiles {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := m.Profiles[name]
		for _, id := range append(append([]string{}, p.IncludeModules...), p.ExcludeModules...) {
			if !seen[id] {
				m.Warnings = append(m.Warnings, fmt.Sprintf("profile %q names unknown module %q", name, id))
			}
		}
	}
	return nil
}

func configErr(line int, format string, args ...any) *apperr.Error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	e := apperr.New(apperr.ConfigInvalid, "%s", msg).WithHint("fix agentpack.yaml and run the command again")
	if line > 0 {
		e.With("line", line)
	}
	return e
}

func lineOfKey(root *yaml.Node, key string) int {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i].Line
		}
	}
	return 0
}
