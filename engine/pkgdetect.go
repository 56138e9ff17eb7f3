package engine

import (
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/frontmatter"
	"go.yaml.in/yaml/v3"
)

// pkgArtifact is one artifact create-package copies into the package
// layout.
type pkgArtifact struct {
	Artifact
	// dir copies Path as a folder (skills, AAM agent folders).
	dir bool
	// convert rewrites a single file on its way in (a Cursor agent rule
	// becomes an agent file); nil copies the bytes.
	convert func(name string, data []byte) []byte
}

// pkgSkippedDirs are never packaged: tool caches, virtualenvs, build
// output and AAM's folder of installed packages (as AAM skips them).
var pkgSkippedDirs = map[string]bool{".git": true, "node_modules": true, ".aam": true, ".venv": true, "venv": true,
	"__pycache__": true, ".mypy_cache": true, ".ruff_cache": true, ".pytest_cache": true, "dist": true, "build": true,
	".tox": true, ".nox": true, ".eggs": true}

// rootInstructionNames are the artifact names AAM gives the instructions
// files a client reads from a project's root.
var rootInstructionNames = map[string]string{"AGENTS.md": "codex-instructions", "CLAUDE.md": "claude-instructions"}

// detectPackageArtifacts finds what create-package can package below root
// ("" for all of fsys): the artifacts of [ScanArtifacts] — the AAM layout
// and the native folders it recognises (.claude/skills, .claude/commands,
// .claude/agents, .github/prompts, .codex/skills, …) — plus the native
// files it does not: Cursor rules (.cursor/rules/*.mdc; agent-*.mdc are
// agents, as AAM deploys them), .github/copilot-instructions.md, and AAM
// agent folders (agent.yaml beside its system prompt). The same artifact
// found in several places (a skill deployed to every client) is kept once:
// the AAM layout wins over native folders, and a copy with other bytes
// gives a warning.
func detectPackageArtifacts(fsys fs.FS, root string) ([]pkgArtifact, []string, error) {
	scanned, err := ScanArtifacts(fsys, root)
	if err != nil {
		return nil, nil, err
	}
	root = strings.Trim(path.Clean("/"+root), "/")
	native, err := scanNative(fsys, root)
	if err != nil {
		return nil, nil, err
	}
	var all []pkgArtifact
	for _, a := range scanned {
		if skippedPackagePath(a.Path) || insideAgentFolder(a.Path, native) {
			continue
		}
		if n, ok := rootInstructionNames[rel(root, a.Path)]; ok && a.Type == module.TypeInstructions {
			a.Name = n
		}
		all = append(all, pkgArtifact{Artifact: a, dir: a.Type == module.TypeSkill})
	}
	all = append(all, native...)
	return dedupeArtifacts(all)
}

// scanNative finds the native files ScanArtifacts leaves out.
func scanNative(fsys fs.FS, root string) ([]pkgArtifact, error) {
	var out []pkgArtifact
	join := func(p string) string { return strings.TrimPrefix(path.Join(root, p), "/") }
	rules, _ := fs.ReadDir(fsys, join(".cursor/rules"))
	for _, ent := range rules {
		if !ent.Type().IsRegular() || path.Ext(ent.Name()) != ".mdc" {
			continue
		}
		p := join(".cursor/rules/" + ent.Name())
		stem := strings.TrimSuffix(ent.Name(), ".mdc")
		a, err := newArtifact(fsys, module.TypeInstructions, p, p)
		if err != nil {
			return nil, err
		}
		a.Name = stem
		pa := pkgArtifact{Artifact: a}
		if n, ok := strings.CutPrefix(stem, "agent-"); ok && n != "" {
			pa.Type, pa.Name, pa.convert = module.TypeAgent, n, agentFromRule
		}
		out = append(out, pa)
	}
	if p := join(".github/copilot-instructions.md"); isRegular(fsys, p) {
		a, err := newArtifact(fsys, module.TypeInstructions, p, p)
		if err != nil {
			return nil, err
		}
		a.Name = "copilot-instructions"
		out = append(out, pkgArtifact{Artifact: a})
	}
	err := fs.WalkDir(fsys, orDefault(root, "."), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if pkgSkippedDirs[d.Name()] && p != orDefault(root, ".") {
			return fs.SkipDir
		}
		if isRegular(fsys, path.Join(p, "SKILL.md")) || !isRegular(fsys, path.Join(p, "agent.yaml")) || p == "." {
			return nil
		}
		a, err := newArtifact(fsys, module.TypeAgent, p, path.Join(p, "agent.yaml"))
		if err != nil {
			return err
		}
		a.Name = path.Base(p)
		a.Description = agentYAMLDescription(fsys, p)
		out = append(out, pkgArtifact{Artifact: a, dir: true})
		return fs.SkipDir
	})
	return out, err
}

// agentYAMLDescription is the description an AAM agent.yaml gives.
func agentYAMLDescription(fsys fs.FS, dir string) string {
	data, err := fs.ReadFile(fsys, path.Join(dir, "agent.yaml"))
	if err != nil {
		return ""
	}
	var def struct {
		Description string `yaml:"description"`
	}
	_ = yaml.Unmarshal(data, &def)
	return def.Description
}

// agentFromRule turns a Cursor agent rule into an agent file: frontmatter
// with the name and the rule's description, and the rule's body.
func agentFromRule(name string, data []byte) []byte {
	body, desc := splitFrontmatter(data)
	fm := frontmatter.New()
	fm.Set("name", name)
	fm.Set("description", desc)
	return fm.Render(body)
}

func skippedPackagePath(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if pkgSkippedDirs[seg] {
			return true
		}
	}
	return false
}

// insideAgentFolder reports whether p lies in one of the AAM agent folders
// (its system-prompt.md is part of the agent, not an artifact).
func insideAgentFolder(p string, native []pkgArtifact) bool {
	for _, a := range native {
		if a.dir && strings.HasPrefix(p, a.Path+"/") {
			return true
		}
	}
	return false
}

// nativePath reports whether p is in a client's folder (.claude/…,
// .cursor/…) rather than in the AAM layout.
func nativePath(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// dedupeArtifacts keeps one artifact per type and name, preferring the AAM
// layout, then the copy most places agree on (a skill deployed to every
// client), then the first path; a dropped copy with other bytes is a
// warning.
func dedupeArtifacts(all []pkgArtifact) ([]pkgArtifact, []string, error) {
	key := func(a pkgArtifact) string { return string(a.Type) + "\x00" + a.Name }
	copies := map[string]int{}
	for _, a := range all {
		copies[key(a)+"\x00"+a.TreeHash]++
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if nativePath(a.Path) != nativePath(b.Path) {
			return !nativePath(a.Path)
		}
		if ca, cb := copies[key(a)+"\x00"+a.TreeHash], copies[key(b)+"\x00"+b.TreeHash]; ca != cb {
			return ca > cb
		}
		return a.Path < b.Path
	})
	var out []pkgArtifact
	var warnings []string
	kept := map[string]pkgArtifact{}
	for _, a := range all {
		k := key(a)
		if first, ok := kept[k]; ok {
			if first.TreeHash != a.TreeHash {
				warnings = append(warnings, "the "+string(a.Type)+" "+a.Name+" at "+a.Path+" differs from the one at "+first.Path+"; packaged "+first.Path)
			}
			continue
		}
		kept[k] = a
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return typeThen(out[i].Artifact, out[j].Artifact, out[i].Name < out[j].Name)
	})
	return out, warnings, nil
}
