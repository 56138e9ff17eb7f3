// Package aampkg is the package format: the aam.yaml manifest (compatible
// with AAM's) and the .aam archive (a deterministic tar.gz).
package aampkg

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"go.yaml.in/yaml/v3"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/lazyregexp"
	"github.com/agentpack/agentpack/internal/yamlerr"
)

// ManifestFile is the manifest's file name in a package folder and archive.
const ManifestFile = "aam.yaml"

// ArtifactKinds are the keys of Manifest.Artifacts, in manifest order.
var ArtifactKinds = []string{"skills", "agents", "prompts", "instructions", "commands", "mcp"}

// Artifact is one entry of an artifacts list.
type Artifact struct {
	Name        string `json:"name" yaml:"name"`
	Path        string `json:"path" yaml:"path"`
	Description string `json:"description" yaml:"description,omitempty"`
}

// Provenance records where a package's artifacts came from.
type Provenance struct {
	SourceType   string `json:"source_type,omitempty" yaml:"source_type,omitempty"`
	SourceURL    string `json:"source_url,omitempty" yaml:"source_url,omitempty"`
	SourceRef    string `json:"source_ref,omitempty" yaml:"source_ref,omitempty"`
	SourcePath   string `json:"source_path,omitempty" yaml:"source_path,omitempty"`
	SourceCommit string `json:"source_commit,omitempty" yaml:"source_commit,omitempty"`
	FetchedAt    string `json:"fetched_at,omitempty" yaml:"fetched_at,omitempty"`
}

// FileChecksums is the archive copy's list of file hashes.
type FileChecksums struct {
	Algorithm string            `json:"algorithm" yaml:"algorithm"`
	Files     map[string]string `json:"files" yaml:"files"` // path -> hex
}

// Manifest is a parsed aam.yaml.
type Manifest struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	Author      string   `json:"author,omitempty"`
	License     string   `json:"license,omitempty"`
	Repository  string   `json:"repository,omitempty"`
	Homepage    string   `json:"homepage,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
	// Artifacts maps a kind (ArtifactKinds) to its entries.
	Artifacts map[string][]Artifact `json:"artifacts"`
	// Dependencies maps a package name to an npm-style constraint.
	Dependencies  map[string]string `json:"dependencies,omitempty"`
	Provenance    *Provenance       `json:"provenance,omitempty"`
	FileChecksums *FileChecksums    `json:"file_checksums,omitempty"`
	// Platforms and Quality are AAM's fields, kept verbatim and unused.
	Platforms *yaml.Node `json:"-"`
	Quality   *yaml.Node `json:"-"`
	// Extra holds other top-level keys, kept verbatim.
	Extra map[string]*yaml.Node `json:"-"`

	// Lines maps a field path ("artifacts.skills[0].path") to its YAML line.
	Lines map[string]int `json:"-"`
}

// Problem is one thing wrong with a manifest.
type Problem struct {
	// Field is the field path, such as "artifacts.skills[0].name"; "" for
	// the whole file.
	Field   string
	Message string
	// Line is the YAML line, or 0.
	Line int
}

// String renders "field.path: message" (with the line when known).
func (p Problem) String() string {
	s := p.Message
	if p.Field != "" {
		s = p.Field + ": " + s
	}
	if p.Line > 0 {
		s += fmt.Sprintf(" (line %d)", p.Line)
	}
	return s
}

var (
	nameRE     = lazyregexp.New(`^(@[a-z0-9][a-z0-9_-]{0,63}/)?[a-z0-9][a-z0-9-]{0,63}$`)
	artifactRE = lazyregexp.New(`^[a-z0-9][a-z0-9-]{0,63}$`)
)

// ValidName reports whether name is a valid package name.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// ValidArtifactName reports whether name is a valid artifact name.
func ValidArtifactName(name string) bool { return artifactRE.MatchString(name) }

// DiskName returns a package name as a folder name: "@scope/name" becomes
// "scope--name".
func DiskName(name string) string {
	if strings.HasPrefix(name, "@") {
		if i := strings.IndexByte(name, '/'); i > 0 {
			return name[1:i] + "--" + name[i+1:]
		}
	}
	return name
}

// NameFromDisk reverses DiskName.
func NameFromDisk(disk string) string {
	if i := strings.Index(disk, "--"); i > 0 {
		return "@" + disk[:i] + "/" + disk[i+2:]
	}
	return disk
}

// ArchiveName is the .aam file name of a package version:
// "<name>-<version>.aam", scoped "<scope>-<name>-<version>.aam".
func ArchiveName(name, version string) string {
	n := strings.TrimPrefix(name, "@")
	n = strings.Replace(n, "/", "-", 1)
	return n + "-" + version + ".aam"
}

// KindType returns the singular artifact type of a kind ("skills" -> "skill").
func KindType(kind string) string {
	if kind == "mcp" {
		return "mcp"
	}
	return strings.TrimSuffix(kind, "s")
}

// TypeKind is KindType's inverse ("skill" -> "skills"); "" when unknown.
func TypeKind(typ string) string {
	for _, k := range ArtifactKinds {
		if KindType(k) == typ || k == typ {
			return k
		}
	}
	return ""
}

// ArtifactTypes returns the singular types of the kinds that have at least
// one artifact, in ArtifactKinds order.
func (m *Manifest) ArtifactTypes() []string {
	out := []string{}
	for _, k := range ArtifactKinds {
		if len(m.Artifacts[k]) > 0 {
			out = append(out, KindType(k))
		}
	}
	return out
}

// ArtifactCount is the number of artifacts of every kind.
func (m *Manifest) ArtifactCount() int {
	n := 0
	for _, k := range ArtifactKinds {
		n += len(m.Artifacts[k])
	}
	return n
}

// ParseManifest parses aam.yaml. A YAML syntax error is an E_MANIFEST_INVALID
// error naming the line; otherwise every content problem is returned at once
// as Problems (the manifest is returned too, as far as it could be read).
func ParseManifest(data []byte) (*Manifest, []Problem, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		line := yamlerr.Line(err)
		return nil, nil, apperr.Wrap(err, apperr.ManifestInvalid, "aam.yaml: %s", yamlerr.Message(err)).
			WithHint("fix the YAML syntax of aam.yaml").With("line", line)
	}
	m := &Manifest{Artifacts: map[string][]Artifact{}, Lines: map[string]int{}}
	var probs []Problem
	add := func(field string, line int, format string, args ...any) {
		probs = append(probs, Problem{Field: field, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		add("", root.Line, "must be a mapping of fields")
		return m, probs, nil
	}
	str := func(field string, n *yaml.Node) string {
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			if n.Tag != "!!null" {
				add(field, n.Line, "must be a string")
			}
			return ""
		}
		return n.Value
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if seen[key] {
			add(key, k.Line, "duplicate key")
			continue
		}
		seen[key] = true
		m.Lines[key] = k.Line
		switch key {
		case "name":
			m.Name = str(key, v)
		case "version":
			m.Version = str(key, v)
		case "description":
			m.Description = str(key, v)
		case "author":
			m.Author = str(key, v)
		case "license":
			m.License = str(key, v)
		case "repository":
			m.Repository = str(key, v)
		case "homepage":
			m.Homepage = str(key, v)
		case "keywords":
			if v.Kind != yaml.SequenceNode {
				if v.Tag != "!!null" {
					add(key, v.Line, "must be a list of strings")
				}
				continue
			}
			for j, it := range v.Content {
				if s := str(fmt.Sprintf("keywords[%d]", j), it); s != "" {
					m.Keywords = append(m.Keywords, s)
				}
			}
		case "artifacts":
			parseArtifacts(m, v, add, str)
		case "dependencies":
			if v.Tag == "!!null" {
				continue
			}
			if v.Kind != yaml.MappingNode {
				add(key, v.Line, "must be a mapping of package name to version constraint")
				continue
			}
			m.Dependencies = map[string]string{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				dn, dv := v.Content[j], v.Content[j+1]
				f := "dependencies." + dn.Value
				m.Lines[f] = dn.Line
				c := str(f, dv)
				if !ValidName(dn.Value) {
					add(f, dn.Line, "%q is not a valid package name", dn.Value)
				}
				if c == "" {
					c = "*"
				} else if _, err := semver.NewConstraint(c); err != nil && c != "latest" {
					add(f, dv.Line, "%q is not a valid version constraint", c)
				}
				m.Dependencies[dn.Value] = c
			}
		case "provenance":
			if v.Tag == "!!null" {
				continue
			}
			var p Provenance
			if err := v.Decode(&p); err != nil {
				add(key, v.Line, "%s", yamlerr.Message(err))
				continue
			}
			m.Provenance = &p
		case "file_checksums":
			if v.Tag == "!!null" {
				continue
			}
			var fc FileChecksums
			if err := v.Decode(&fc); err != nil {
				add(key, v.Line, "%s", yamlerr.Message(err))
				continue
			}
			m.FileChecksums = &fc
		case "platforms":
			m.Platforms = v
		case "quality":
			m.Quality = v
		default:
			if m.Extra == nil {
				m.Extra = map[string]*yaml.Node{}
			}
			m.Extra[key] = v
		}
	}
	probs = append(probs, m.check()...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line && probs[i].Line > 0 && probs[j].Line > 0 })
	return m, probs, nil
}

func parseArtifacts(m *Manifest, v *yaml.Node, add func(string, int, string, ...any), str func(string, *yaml.Node) string) {
	if v.Kind != yaml.MappingNode {
		if v.Tag != "!!null" {
			add("artifacts", v.Line, "must be a mapping of artifact kind to a list")
		}
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, list := v.Content[i], v.Content[i+1]
		kind := k.Value
		f := "artifacts." + kind
		m.Lines[f] = k.Line
		if TypeKind(kind) != kind {
			add(f, k.Line, "unknown artifact kind %q (valid: %s)", kind, strings.Join(ArtifactKinds, ", "))
			continue
		}
		if list.Tag == "!!null" {
			continue
		}
		if list.Kind != yaml.SequenceNode {
			add(f, list.Line, "must be a list")
			continue
		}
		for j, it := range list.Content {
			af := fmt.Sprintf("%s[%d]", f, j)
			m.Lines[af] = it.Line
			if it.Kind != yaml.MappingNode {
				add(af, it.Line, "must be a mapping with name, path and description")
				continue
			}
			var a Artifact
			for x := 0; x+1 < len(it.Content); x += 2 {
				ak, av := it.Content[x], it.Content[x+1]
				m.Lines[af+"."+ak.Value] = ak.Line
				switch ak.Value {
				case "name":
					a.Name = str(af+".name", av)
				case "path":
					a.Path = str(af+".path", av)
				case "description":
					a.Description = str(af+".description", av)
				}
			}
			m.Artifacts[kind] = append(m.Artifacts[kind], a)
		}
	}
}

// check returns the content problems of a manifest.
func (m *Manifest) check() []Problem {
	var probs []Problem
	add := func(field, format string, args ...any) {
		probs = append(probs, Problem{Field: field, Line: m.Lines[field], Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case m.Name == "":
		add("name", "is required")
	case !ValidName(m.Name):
		add("name", "%q is not a valid package name (lowercase letters, digits and '-', optionally @scope/)", m.Name)
	}
	switch {
	case m.Version == "":
		add("version", "is required")
	default:
		if _, err := semver.StrictNewVersion(m.Version); err != nil {
			add("version", "%q is not a semantic version such as 1.0.0", m.Version)
		}
	}
	switch {
	case strings.TrimSpace(m.Description) == "":
		add("description", "is required")
	case len(m.Description) > 256:
		add("description", "is %d characters long; the limit is 256", len(m.Description))
	}
	if m.ArtifactCount() == 0 {
		add("artifacts", "must list at least one artifact")
	}
	for _, kind := range ArtifactKinds {
		names := map[string]bool{}
		for j, a := range m.Artifacts[kind] {
			af := fmt.Sprintf("artifacts.%s[%d]", kind, j)
			line := func(f string) int {
				if l := m.Lines[f]; l > 0 {
					return l
				}
				return m.Lines[af]
			}
			switch {
			case a.Name == "":
				probs = append(probs, Problem{af + ".name", "is required", line(af + ".name")})
			case !ValidArtifactName(a.Name):
				probs = append(probs, Problem{af + ".name", fmt.Sprintf("%q is not a valid artifact name (lowercase letters, digits and '-')", a.Name), line(af + ".name")})
			case names[a.Name]:
				probs = append(probs, Problem{af + ".name", fmt.Sprintf("%q is listed twice", a.Name), line(af + ".name")})
			}
			names[a.Name] = true
			if a.Path == "" {
				probs = append(probs, Problem{af + ".path", "is required", line(af + ".path")})
			} else if !safeRel(a.Path) {
				probs = append(probs, Problem{af + ".path", fmt.Sprintf("%q must be a relative path inside the package without '..'", a.Path), line(af + ".path")})
			}
		}
	}
	return probs
}

// safeRel reports whether p is a relative '/' path without "..".
func safeRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") || (len(p) > 1 && p[1] == ':') {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}
