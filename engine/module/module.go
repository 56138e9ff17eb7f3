package module

import (
	"strings"
)

// Type is the kind of asset a module holds.
type Type string

// Module types.
const (
	TypeInstructions Type = "instructions"
	TypeSkill        Type = "skill"
	TypePrompt       Type = "prompt"
	TypeCommand      Type = "command"
	TypeAgent        Type = "agent"
	TypeMCP          Type = "mcp"
)

var moduleTypes = []Type{TypeInstructions, TypeSkill, TypePrompt, TypeCommand, TypeAgent, TypeMCP}

// Valid reports whether t is a known module type.
func (t Type) Valid() bool {
	for _, x := range moduleTypes {
		if x == t {
			return true
		}
	}
	return false
}

// TypeNames lists the module types, in the order the spec gives them.
func TypeNames() []string {
	out := make([]string, len(moduleTypes))
	for i, t := range moduleTypes {
		out[i] = string(t)
	}
	return out
}

// Module is one entry of the manifest's modules list.
type Module struct {
	ID       string         `yaml:"id" json:"id"`
	Type     Type           `yaml:"type" json:"type"`
	Enabled  *bool          `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	Tags     []string       `yaml:"tags,omitempty" json:"tags"`
	Targets  []string       `yaml:"targets,omitempty" json:"targets"`
	Source   Source         `yaml:"source" json:"source"`
	Metadata map[string]any `yaml:"metadata,omitempty" json:"metadata,omitempty"`
	// DeployName, when set, names the module's files instead of its id
	// (package artifacts are named after the artifact, as AAM does).
	DeployName string `yaml:"-" json:"-"`
}

// IsEnabled reports whether the module is enabled (the default).
func (m *Module) IsEnabled() bool { return m.Enabled == nil || *m.Enabled }

// Name is the id after its first ':', made safe as one path element.
func (m *Module) Name() string {
	if m.DeployName != "" {
		return SafeName(m.DeployName)
	}
	name := m.ID
	if i := strings.Index(name, ":"); i >= 0 {
		name = name[i+1:]
	}
	return SafeName(name)
}

// SafeName turns s into one path element: no separators, no "..". Each
// character other than an ASCII letter, digit, '.', '_' or '-' becomes
// '_' (an invalid UTF-8 byte too), then dots are trimmed from both ends.
// A compile asks for every module's name a few times: a name already safe
// costs no allocation (a regexp took 2 µs a call, 2 ms of CPU in a cold
// deploy of 1,000 modules).
func SafeName(s string) string {
	if !safeAlready(s) {
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			if r < 0x80 && safeByte(byte(r)) {
				b.WriteByte(byte(r))
			} else {
				b.WriteByte('_')
			}
		}
		s = b.String()
	}
	s = strings.Trim(s, ".")
	if s == "" {
		return "_"
	}
	return s
}

// safeAlready reports whether every byte of s is one SafeName keeps.
func safeAlready(s string) bool {
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			return false
		}
	}
	return true
}

func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Source says where a module's files come from: exactly one field is set.
type Source struct {
	LocalPath *LocalPathSource `yaml:"local_path,omitempty" json:"local_path,omitempty"`
	Git       *GitSource       `yaml:"git,omitempty" json:"git,omitempty"`
	Package   *PackageSource   `yaml:"package,omitempty" json:"package,omitempty"`
}

// LocalPathSource is a folder or file inside (or relative to) the repo.
type LocalPathSource struct {
	Path string `yaml:"path" json:"path"`
}

// GitSource is a git repo pinned by the lockfile.
type GitSource struct {
	URL     string `yaml:"url" json:"url"`
	Ref     string `yaml:"ref,omitempty" json:"ref,omitempty"`
	Subdir  string `yaml:"subdir,omitempty" json:"subdir,omitempty"`
	Shallow *bool  `yaml:"shallow,omitempty" json:"shallow,omitempty"`
}

// PackageSource is an artifact of a registry package.
type PackageSource struct {
	Name     string `yaml:"name" json:"name"`
	Version  string `yaml:"version,omitempty" json:"version,omitempty"`
	Artifact string `yaml:"artifact,omitempty" json:"artifact,omitempty"`
	Registry string `yaml:"registry,omitempty" json:"registry,omitempty"`
}

// Count is how many kinds of source are set; a valid source has exactly one.
func (s Source) Count() int {
	n := 0
	if s.LocalPath != nil {
		n++
	}
	if s.Git != nil {
		n++
	}
	if s.Package != nil {
		n++
	}
	return n
}

// String renders the source as a command-line source spec.
func (s Source) String() string {
	switch {
	case s.LocalPath != nil:
		return "local:" + s.LocalPath.Path
	case s.Git != nil:
		q := []string{}
		if s.Git.Ref != "" {
			q = append(q, "ref="+s.Git.Ref)
		}
		if s.Git.Subdir != "" {
			q = append(q, "subdir="+s.Git.Subdir)
		}
		out := "git:" + s.Git.URL
		if len(q) > 0 {
			out += "#" + strings.Join(q, "&")
		}
		return out
	case s.Package != nil:
		out := "pkg:" + s.Package.Name
		if s.Package.Version != "" {
			out += "@" + s.Package.Version
		}
		return out
	}
	return ""
}
