// Package skillset is the set of skills a profile deploys, as an MCP
// server serves them under the Skills extension (SEP-2640): each skill with
// its frontmatter and every file with the exact bytes a deploy writes, its
// digest and size. [Build] derives it from the compiled desired state, so
// it is never a second opinion on what deploy would do.
package skillset

import (
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/frontmatter"
	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// Per-skill limits of the Skills extension: a skill over either is not
// served (hosts are not required to load it).
const (
	MaxFiles = 512
	MaxBytes = 16 << 20
)

// SkillFile is the main file of every skill.
const SkillFile = "SKILL.md"

// validName is the Agent Skills naming rule: lower-case letters, digits
// and single hyphens, at most 64 characters.
var validName = lazyregexp.New(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports whether name satisfies the Agent Skills naming rules.
func ValidName(name string) bool { return len(name) <= 64 && validName.MatchString(name) }

// File is one file of a skill as a deploy writes it.
type File struct {
	// Path is relative to the skill's folder, '/'-separated.
	Path string
	Data []byte
	// Digest is "sha256:<hex>" of Data.
	Digest string
	Size   int64
}

// Skill is one served skill.
type Skill struct {
	// Path locates the skill in the served namespace: its name, or
	// "<module prefix>/<name>" when several modules use the name.
	Path     string
	Name     string
	ModuleID string
	// Frontmatter is SKILL.md's YAML frontmatter as JSON-ready values.
	Frontmatter map[string]any
	// Files are sorted by Path; SKILL.md is one of them.
	Files []*File
}

// Entry is one child of a folder of the namespace.
type Entry struct {
	// Name is the last element; Path the whole '/'-separated path.
	Name, Path string
	// File is nil for a folder.
	File *File
}

// Set is every served skill, sorted by Path, with lookups by path.
type Set struct {
	Skills  []*Skill
	skills  map[string]*Skill
	files   map[string]*File
	entries map[string][]Entry // folder path → children, sorted by name
	listed  map[string]bool    // "<folder>\x00<child>" already in entries
}

// Empty returns a set without skills.
func Empty() *Set {
	return &Set{skills: map[string]*Skill{}, files: map[string]*File{}, entries: map[string][]Entry{}, listed: map[string]bool{}}
}

// Skill returns the skill at path, or nil.
func (s *Set) Skill(path string) *Skill { return s.skills[path] }

// File returns the file at a namespace path ("<skill path>/<file>"), or nil.
func (s *Set) File(path string) *File { return s.files[path] }

// ReadDir returns the children of a folder of the namespace: a skill's
// folder or one of its subfolders, or a prefix folder above skills. ok is
// false when path is not a folder.
func (s *Set) ReadDir(path string) (children []Entry, ok bool) {
	children, ok = s.entries[path]
	return children, ok
}

// Build collects the skills of mods as desired deploys them. A skill module
// no selected target deploys is not served; one whose name breaks the
// Agent Skills rules or whose files exceed [MaxFiles] or [MaxBytes] is left
// out with a warning. Modules whose skills share a name are all served, each
// under a prefix made of its module id, with a warning: none shadows
// another.
func Build(mods []*module.LoadedModule, d *desired.State, warn func(format string, args ...any)) *Set {
	var found []*Skill
	for _, lm := range mods {
		if lm.Type != module.TypeSkill {
			continue
		}
		sk, err := fromModule(lm, d, warn)
		if err != "" {
			warn("skill module %s is not served over MCP: %s", lm.ID, err)
			continue
		}
		if sk != nil {
			found = append(found, sk)
		}
	}
	byName := map[string][]*Skill{}
	for _, sk := range found {
		byName[sk.Name] = append(byName[sk.Name], sk)
	}
	for name, group := range byName {
		if len(group) < 2 {
			continue
		}
		var ids, paths []string
		for _, sk := range group {
			sk.Path = module.SafeName(sk.ModuleID) + "/" + name
			ids, paths = append(ids, sk.ModuleID), append(paths, sk.Path)
		}
		sort.Strings(ids)
		sort.Strings(paths)
		warn("skill name %q is used by modules %s: each is served under its own path (%s), none under %q",
			name, strings.Join(ids, ", "), strings.Join(paths, ", "), name)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	set := Empty()
	for _, sk := range found {
		set.add(sk, warn)
	}
	for dir := range set.entries {
		sort.Slice(set.entries[dir], func(i, j int) bool { return set.entries[dir][i].Name < set.entries[dir][j].Name })
	}
	return set
}

// add indexes sk, unless one of its paths is already taken by another
// skill's file with other bytes (only prefixed names can meet nested
// files), which leaves sk out with a warning.
func (s *Set) add(sk *Skill, warn func(format string, args ...any)) {
	if s.skills[sk.Path] != nil {
		warn("skill module %s is not served over MCP: path %s is taken by module %s", sk.ModuleID, sk.Path, s.skills[sk.Path].ModuleID)
		return
	}
	for _, f := range sk.Files {
		if prev := s.files[sk.Path+"/"+f.Path]; prev != nil && prev.Digest != f.Digest {
			warn("skill module %s is not served over MCP: %s/%s is another skill's file", sk.ModuleID, sk.Path, f.Path)
			return
		}
	}
	s.Skills = append(s.Skills, sk)
	s.skills[sk.Path] = sk
	for _, f := range sk.Files {
		full := sk.Path + "/" + f.Path
		s.files[full] = f
		// Every ancestor folder lists its child once.
		child, file := full, f
		for {
			dir, name := path.Split(child)
			dir = strings.TrimSuffix(dir, "/")
			if dir == "" {
				break
			}
			if !s.listed[dir+"\x00"+name] {
				s.listed[dir+"\x00"+name] = true
				s.entries[dir] = append(s.entries[dir], Entry{Name: name, Path: child, File: file})
			}
			child, file = dir, nil
		}
	}
}

// fromModule reads the deployed copy of one skill module out of d: the
// files every target writes into the skill's folder. It returns nil
// when no selected target deploys the module, and a reason when the skill
// cannot be served.
func fromModule(lm *module.LoadedModule, d *desired.State, warn func(format string, args ...any)) (*Skill, string) {
	// The folders the targets deploy the skill to: where its SKILL.md lands
	// (whatever each target names the folder).
	suffix := string(filepath.Separator) + SkillFile
	var dirs []string
	for _, f := range d.Files {
		if slices.Contains(f.ModuleIDs, lm.ID) && strings.HasSuffix(f.Path.String(), suffix) {
			dirs = append(dirs, strings.TrimSuffix(f.Path.String(), string(filepath.Separator)+SkillFile))
		}
	}
	// A SKILL.md nested in the skill's own subfolders is one of its files,
	// not another copy.
	all := slices.Clone(dirs)
	dirs = slices.DeleteFunc(dirs, func(dir string) bool {
		return slices.ContainsFunc(all, func(o string) bool { return strings.HasPrefix(dir, o+string(filepath.Separator)) })
	})
	if len(dirs) == 0 {
		return nil, ""
	}
	// d.Files is sorted by (target, path): the first folder is the copy
	// served; the others must hold the same bytes.
	copies := make([]map[string][]byte, len(dirs))
	for i, dir := range dirs {
		copies[i] = map[string][]byte{}
		for _, f := range d.Files {
			if rel, ok := strings.CutPrefix(f.Path.String(), dir+string(filepath.Separator)); ok && slices.Contains(f.ModuleIDs, lm.ID) {
				copies[i][filepath.ToSlash(rel)] = f.Data
			}
		}
	}
	for i := 1; i < len(copies); i++ {
		if !sameFiles(copies[0], copies[i]) {
			warn("skill module %s deploys different files to %s and %s; MCP serves the first", lm.ID, dirs[0], dirs[i])
		}
	}
	sk := &Skill{ModuleID: lm.ID}
	var total int64
	for rel, data := range copies[0] {
		sk.Files = append(sk.Files, &File{Path: rel, Data: data, Digest: "sha256:" + checksum.SHA256Hex(data), Size: int64(len(data))})
		total += int64(len(data))
	}
	sort.Slice(sk.Files, func(i, j int) bool { return sk.Files[i].Path < sk.Files[j].Path })
	if len(sk.Files) > MaxFiles {
		return nil, fmt.Sprintf("it has %d files, over the limit of %d per skill", len(sk.Files), MaxFiles)
	}
	if total > MaxBytes {
		return nil, fmt.Sprintf("its files hold %d bytes, over the limit of %d per skill", total, MaxBytes)
	}
	fm, _, err := frontmatter.Parse(copies[0][SkillFile])
	if err != nil {
		return nil, "SKILL.md: " + err.Error()
	}
	sk.Name = fm.String("name")
	if !ValidName(sk.Name) {
		return nil, fmt.Sprintf("its name %q breaks the Agent Skills naming rules (lower-case letters, digits and single hyphens, at most 64 characters)", sk.Name)
	}
	sk.Path = sk.Name
	sk.Frontmatter = map[string]any{}
	for _, k := range fm.Keys() {
		sk.Frontmatter[k] = jsonValue(fm.Value(k))
	}
	return sk, ""
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || string(v) != string(w) {
			return false
		}
	}
	return true
}

// jsonValue turns a decoded YAML value into one encoding/json can write:
// map keys become strings, and non-finite floats their YAML spelling.
func jsonValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case float64:
		switch {
		case math.IsNaN(x):
			return ".nan"
		case math.IsInf(x, 1):
			return ".inf"
		case math.IsInf(x, -1):
			return "-.inf"
		}
	}
	return v
}
