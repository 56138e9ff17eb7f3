package module

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/frontmatter"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/lazyregexp"
	"github.com/agentpack/agentpack/internal/textdiff"
	"github.com/agentpack/agentpack/internal/workers"
	"go.yaml.in/yaml/v3"
)

// File is one file of a loaded module.
type File struct {
	// Path is relative to the module root, with '/' separators.
	Path string
	Data []byte
	Mode fs.FileMode
	// Src is the file Data was read from, byte for byte, or "" when the
	// bytes were made or changed (an overlay patch): a cache may keep the
	// path and its hash instead of the bytes.
	Src fsys.AbsPath
	// SHA256 is the hex sha256 of Data, computed while reading (in the
	// load's parallel workers); "" when Src is "".
	SHA256 string
	// Use is what the load did with the bytes besides hashing them.
	Use Use
}

// Use is what loading a module does with a file's bytes, and so what an
// edit of the file can change in what is compiled from it.
type Use uint8

const (
	// UseParsed: the bytes were kept, to be parsed or rendered; anything
	// may be made from them. The zero value, and the safe one.
	UseParsed Use = iota
	// UseHashed: the bytes were only hashed (Data is nil). Nothing can be
	// made from them but the file's verbatim copies, so an edit changes
	// their hash and nothing more.
	UseHashed
	// UseSkillMain: a skill's SKILL.md, whose front matter is only checked
	// ([CheckSkillMain]) and whose bytes are only copied (every adapter
	// copies a skill's files verbatim): an edit that passes the check
	// changes its copies' hash and nothing more.
	UseSkillMain
)

// LoadedModule is a module with its source files read and validated.
type LoadedModule struct {
	*Module
	// SourcePath is the absolute folder or file the module came from.
	SourcePath string
	// Files are sorted by Path. Single-file modules have exactly one.
	Files []File
	// Main is the module's principal file (AGENTS.md, SKILL.md, the .md file,
	// the MCP definition); Frontmatter and Body are parsed from it.
	Main        *File
	Frontmatter *frontmatter.Block
	Body        []byte
	// MCP is the parsed server definition of an mcp module.
	MCP *MCPServer
	// Origins names the overlay layer (global, machine, project) that set
	// each file an overlay changed; other files are upstream's.
	Origins map[string]string
}

// MCPServer is the definition held by an mcp module (SPEC §3).
type MCPServer struct {
	Name      string            `yaml:"name" json:"name"`
	Transport string            `yaml:"transport" json:"transport"`
	Command   string            `yaml:"command,omitempty" json:"command,omitempty"`
	Args      []string          `yaml:"args,omitempty" json:"args,omitempty"`
	Env       map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	EnvVars   []string          `yaml:"env_vars,omitempty" json:"env_vars,omitempty"`
	Cwd       string            `yaml:"cwd,omitempty" json:"cwd,omitempty"`
	URL       string            `yaml:"url,omitempty" json:"url,omitempty"`
	Headers   map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
}

// loadModuleFiles reads a module's files from path (a folder or a file)
// through sys, applying the symlink rule described at the top of links.go.
// A path inside a cached git checkout is also refused when it holds a link
// the cache left out, and its files get git's modes instead of the cache's
// read-only ones.
func loadModuleFiles(sys fsys.System, mod *Module, path, within string, hashOnly bool, shaped func(fsys.AbsPath, textdiff.Shape), known KnownHash) ([]File, error) {
	abs, err := absModulePath(path)
	if err != nil {
		return nil, moduleErr(mod, path, "cannot resolve %s: %s", path, ioCause(err))
	}
	co, err := gitsource.FindCheckout(abs.String())
	if err != nil {
		return nil, err
	}
	if co != nil {
		if err := refuseLinksLeftOut(mod, abs.String(), co); err != nil {
			return nil, err
		}
	}
	real, fi, err := resolveModulePath(sys, mod, abs, within)
	if err != nil {
		return nil, err
	}
	if co != nil && real != abs {
		if err := refuseLinksLeftOut(mod, real.String(), co); err != nil {
			return nil, err
		}
	}
	var jobs []readJob
	if fi.IsDir() {
		w := &folderWalk{sys: sys, mod: mod, root: real}
		if err := w.walk("", "", []string{""}); err != nil {
			return nil, err
		}
		jobs = w.jobs
	} else {
		jobs = []readJob{{rel: abs.Base(), abs: real, fi: fi}}
	}
	files := make([]File, len(jobs))
	errs := make([]error, len(jobs))
	read := func(i int) {
		keep := !hashOnly || mayBeMain(mod.Type, jobs[i].rel, !fi.IsDir())
		if !keep && known != nil && shaped == nil && jobs[i].fi == nil {
			if f, ok := knownFile(sys, jobs[i], known); ok {
				files[i] = f
				return
			}
		}
		files[i], errs[i] = readJobFile(sys, mod, jobs[i], keep, shaped)
	}
	if len(jobs) <= serialFiles {
		// Modules load in parallel already: a few files more goroutines
		// would only cost their start.
		for i := range jobs {
			read(i)
		}
	} else {
		workers.Parallel(len(jobs), read)
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	if co != nil {
		gitModes(files)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// absModulePath makes path absolute against the working directory, as
// module paths given on a command line may be relative.
func absModulePath(path string) (fsys.AbsPath, error) {
	if !filepath.IsAbs(path) {
		p, err := filepath.Abs(path)
		if err != nil {
			return "", err
		}
		path = p
	}
	return fsys.NewAbsPath(path)
}

// DropHashedBytes lets go of the bytes of every file but the main one that
// was hashed as it was read from a source file: its Src and SHA256 say
// where the bytes are and what they must hash to, for a caller that needs
// only hashes until it writes (the main file's bytes stay, parsed).
func (lm *LoadedModule) DropHashedBytes() {
	for i := range lm.Files {
		if f := &lm.Files[i]; f != lm.Main && f.Src != "" && f.SHA256 != "" {
			f.Data = nil
		}
	}
}

// serialFiles is how many files a module may have and still be read on
// the goroutine loading it.
const serialFiles = 16

// mayBeMain reports whether the file at rel of a module of type t can be
// its main file (see validate), whose bytes the module keeps parsed; single
// says the module is that one file.
func mayBeMain(t Type, rel string, single bool) bool {
	switch {
	case single:
		return true
	case t == TypeSkill:
		return rel == "SKILL.md"
	case t == TypeInstructions:
		return strings.EqualFold(filepath.Ext(rel), ".md")
	}
	return true
}

// readBufs are the buffers files read only to be hashed go through.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// readJobFile reads the file j names through sys and hashes it; keep
// says whether its bytes are kept (else Data is nil and the bytes went
// through a reused buffer). A file only a folder listing named is read
// with [fsys.ReadRegular]: one open that also gives its mode and refuses
// to follow a link that replaced it, and no Lstat.
func readJobFile(sys fsys.System, mod *Module, j readJob, keep bool, shaped func(fsys.AbsPath, textdiff.Shape)) (File, error) {
	var buf *[]byte
	if !keep {
		buf = readBufs.Get().(*[]byte)
		defer readBufs.Put(buf)
	}
	fi := j.fi
	var data []byte
	var err error
	if fi == nil {
		var into []byte
		if buf != nil {
			into = *buf
		}
		data, fi, err = fsys.ReadRegular(sys, j.abs, into)
	} else if fi.Mode().IsRegular() {
		data, err = sys.ReadFile(j.abs)
	}
	if err != nil {
		return File{}, moduleErr(mod, j.abs.String(), "cannot read %s: %s", j.abs, ioCause(err))
	}
	// The listing said regular file; something else now (a FIFO would
	// block the read) means the folder changed under us.
	if !fi.Mode().IsRegular() {
		return File{}, moduleErr(mod, j.abs.String(), "%s is no longer a regular file", j.abs).
			WithHint("run the command again once the module's files stop changing")
	}
	f := File{Path: j.rel, Data: data, Mode: fi.Mode().Perm(), Src: j.abs, SHA256: checksum.SHA256Hex(data)}
	if !keep {
		f.Use = UseHashed
		if shaped != nil {
			shaped(j.abs, textdiff.ShapeOf(data))
		}
		f.Data = nil
	}
	return f, nil
}

// KnownHash tells the sha256 (hex) of the file at path when stat data
// (from a look that does not follow a link) is what it was when that hash
// was taken, and the hash may be trusted: the source cache's last load,
// which recorded both and only when neither was too recent.
type KnownHash func(path fsys.AbsPath, stat fsys.StatData) (sha string, ok bool)

// knownFile is the file j names without reading it, when a look at it
// finds a regular file known says the hash of; ok is false otherwise,
// and the file is read as usual.
func knownFile(sys fsys.System, j readJob, known KnownHash) (File, bool) {
	st, err := fsys.LstatData(sys, j.abs)
	if err != nil || !st.Mode.IsRegular() {
		return File{}, false
	}
	sha, ok := known(j.abs, st)
	if !ok {
		return File{}, false
	}
	return File{Path: j.rel, Mode: st.Mode.Perm(), Src: j.abs, SHA256: sha, Use: UseHashed}, true
}

// LoadModule reads and validates a module from its resolved source path
// through sys. A link at path itself may resolve anywhere inside the folder
// holding it.
func LoadModule(sys fsys.System, mod *Module, path string) (*LoadedModule, error) {
	return LoadModuleIn(sys, mod, path, "")
}

// LoadModuleIn is [LoadModule] for a module inside the folder within (the
// desired-state repo): a link at path itself — a single-file module or a
// module folder that is a link — may resolve anywhere inside within, so a
// prompt linked to a shared file of the repo loads, while one linked out of
// the repo does not. Links inside a module folder must stay inside it.
func LoadModuleIn(sys fsys.System, mod *Module, path, within string) (*LoadedModule, error) {
	files, err := LoadFilesIn(sys, mod, path, within)
	if err != nil {
		return nil, err
	}
	return NewLoaded(mod, path, files)
}

// LoadFilesIn reads a module's files as [LoadModuleIn] does, without
// validating them, so overlays can change them first.
func LoadFilesIn(sys fsys.System, mod *Module, path, within string) ([]File, error) {
	return loadModuleFiles(sys, mod, path, within, false, nil, nil)
}

// LoadHashesIn is [LoadFilesIn] for a caller that needs only the hashes
// of the files that cannot be the module's main file: those are read
// through a reused buffer and hashed, and their Data is nil (their Src
// and SHA256 say where the bytes are and what they hash to).
func LoadHashesIn(sys fsys.System, mod *Module, path, within string) ([]File, error) {
	return loadModuleFiles(sys, mod, path, within, true, nil, nil)
}

// LoadKnownHashesIn is [LoadHashesIn] that does not read a file whose
// hash known tells from a look at it ([KnownHash]): after an edit of one
// file of a repo, only that file is read and hashed again.
func LoadKnownHashesIn(sys fsys.System, mod *Module, path, within string, known KnownHash) ([]File, error) {
	return loadModuleFiles(sys, mod, path, within, true, nil, known)
}

// LoadShapesIn is [LoadHashesIn] that also hands shaped the diff shape of
// each file it hashes without keeping its bytes ([textdiff.ShapeOf]), by
// source path: a diff of the file as created needs no second read before
// it is shown. shaped is called from several goroutines.
func LoadShapesIn(sys fsys.System, mod *Module, path, within string, shaped func(fsys.AbsPath, textdiff.Shape)) ([]File, error) {
	return loadModuleFiles(sys, mod, path, within, true, shaped, nil)
}

// NewLoaded validates files (sorted by Path) as the content of mod read
// from path.
func NewLoaded(mod *Module, path string, files []File) (*LoadedModule, error) {
	lm := &LoadedModule{Module: mod, SourcePath: path, Files: files}
	if err := lm.validate(); err != nil {
		return nil, err
	}
	return lm, nil
}

var bashInBody = lazyregexp.New("(?m)(^|\\s)!`|!bash\\b|```bash\\s*\\n[^`]*!")

func (lm *LoadedModule) validate() error {
	switch lm.Type {
	case TypeInstructions:
		if err := lm.pickMain("AGENTS.md"); err != nil {
			return err
		}
	case TypeSkill:
		if err := lm.pickMain("SKILL.md"); err != nil {
			return err
		}
		if !skillFrontmatterOK(lm.Frontmatter) {
			return moduleErr(lm.Module, lm.mainPath(), "SKILL.md needs frontmatter with non-empty `name` and `description`").
				WithHint("open SKILL.md with a frontmatter block: a `---` line, `name: <name>`, `description: <what it does>`, a `---` line")
		}
		if lm.Main.Src != "" {
			lm.Main.Use = UseSkillMain
		}
	case TypePrompt, TypeCommand, TypeAgent:
		if err := lm.pickSingleMarkdown(); err != nil {
			return err
		}
		if lm.Type == TypeCommand {
			if lm.Frontmatter.String("description") == "" {
				return moduleErr(lm.Module, lm.mainPath(), "command needs frontmatter `description`").
					WithHint("open the file with a frontmatter block: a `---` line, `description: <what it does>`, a `---` line")
			}
			if bashInBody.Match(lm.Body) && !strings.Contains(yamlText(lm.Frontmatter.Node("allowed-tools")), "Bash(") {
				return moduleErr(lm.Module, lm.mainPath(), "command runs bash but `allowed-tools` does not allow Bash(...)").
					WithHint("add `allowed-tools: Bash(...)` to the frontmatter")
			}
		}
		if lm.Type == TypeAgent && (lm.Frontmatter.String("name") == "" || lm.Frontmatter.String("description") == "") {
			return moduleErr(lm.Module, lm.mainPath(), "agent needs frontmatter `name` and `description`").
				WithHint("open the file with a frontmatter block: a `---` line, `name:`, `description:`, a `---` line")
		}
	case TypeMCP:
		return lm.loadMCP()
	}
	return nil
}

// CheckSkillMain reports whether data passes the checks a skill's SKILL.md
// goes through when it is loaded (its front matter parses and names the
// skill and what it does): for [UseSkillMain], all a load makes of its
// bytes besides their copies.
func CheckSkillMain(data []byte) bool {
	fm, _, err := frontmatter.Parse(data)
	return err == nil && skillFrontmatterOK(fm)
}

func skillFrontmatterOK(fm *frontmatter.Block) bool {
	return fm.String("name") != "" && fm.String("description") != ""
}

func (lm *LoadedModule) mainPath() string {
	if lm.Main == nil {
		return lm.SourcePath
	}
	if len(lm.Files) == 1 && filepath.Base(lm.SourcePath) == lm.Main.Path {
		return lm.SourcePath
	}
	return filepath.Join(lm.SourcePath, filepath.FromSlash(lm.Main.Path))
}

// pickMain selects the named file at the module root, or the module's only
// file when the source is that file itself.
func (lm *LoadedModule) pickMain(name string) error {
	for i := range lm.Files {
		f := &lm.Files[i]
		if f.Path == name || (len(lm.Files) == 1 && strings.EqualFold(filepath.Ext(f.Path), ".md") && lm.Type == TypeInstructions) {
			lm.Main = f
			return lm.parseMain()
		}
	}
	e := moduleErr(lm.Module, lm.SourcePath, "%s module has no %s", lm.Type, name).WithHint("add %s to %s", name, lm.SourcePath)
	if len(lm.Files) == 1 && filepath.Base(lm.SourcePath) == lm.Files[0].Path {
		e.WithHint("a %s module is a folder holding %s; point the source at that folder", lm.Type, name)
	}
	return e
}

func (lm *LoadedModule) pickSingleMarkdown() error {
	var md []*File
	for i := range lm.Files {
		if strings.EqualFold(filepath.Ext(lm.Files[i].Path), ".md") {
			md = append(md, &lm.Files[i])
		}
	}
	if len(md) != 1 {
		return moduleErr(lm.Module, lm.SourcePath, "%s module must be exactly one .md file, found %d", lm.Type, len(md)).
			WithHint("point source.local_path.path at one .md file")
	}
	lm.Main = md[0]
	lm.Files = []File{*md[0]}
	lm.Main = &lm.Files[0]
	return lm.parseMain()
}

func (lm *LoadedModule) parseMain() error {
	fm, body, err := frontmatter.Parse(lm.Main.Data)
	if err != nil {
		return moduleErr(lm.Module, lm.mainPath(), "%v", err).WithHint("fix the --- header of the file")
	}
	lm.Frontmatter, lm.Body = fm, body
	return nil
}

func (lm *LoadedModule) loadMCP() error {
	if len(lm.Files) != 1 {
		return moduleErr(lm.Module, lm.SourcePath, "mcp module must be one YAML or JSON file").
			WithHint("point source.local_path.path at the server definition file")
	}
	lm.Main = &lm.Files[0]
	var s MCPServer
	var err error
	if strings.HasSuffix(lm.Main.Path, ".json") {
		err = json.Unmarshal(lm.Main.Data, &s)
	} else {
		err = yaml.Unmarshal(lm.Main.Data, &s)
	}
	if err != nil {
		return moduleErr(lm.Module, lm.mainPath(), "cannot parse MCP server definition: %v", err)
	}
	if s.Name == "" {
		s.Name = lm.Name()
	}
	if err := s.Validate(); err != nil {
		e := moduleErr(lm.Module, lm.mainPath(), "%s", err.Error())
		var ve *MCPError
		if errors.As(err, &ve) && ve.Hint != "" {
			e = e.WithHint("%s", ve.Hint)
		}
		return e
	}
	lm.MCP = &s
	return nil
}

func yamlText(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	b, _ := yaml.Marshal(n)
	return string(b)
}

func moduleErr(mod *Module, path, format string, args ...any) *apperr.Error {
	e := apperr.New(apperr.ModuleInvalid, format, args...)
	e.Message = "module " + mod.ID + ": " + e.Message
	return e.With("module_id", mod.ID).With("path", path).With("path_posix", filepath.ToSlash(path)).
		WithHint("fix the module's files and run the command again")
}
