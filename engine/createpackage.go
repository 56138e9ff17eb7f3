package engine

import (
	"context"

	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// CreatePackageOptions are the arguments of `agentpack create-package`.
type CreatePackageOptions struct {
	// Artifacts names the detected artifacts to include; empty: all of them.
	Artifacts []string
	// Type keeps only artifacts of this type.
	Type                       string
	Name, Version, Description string
	// Force replaces an existing aam.yaml.
	Force bool
}

// CreatePackageData is the data of `agentpack create-package`.
type CreatePackageData struct {
	ManifestPath      string   `json:"manifest_path"`
	ManifestPathPosix string   `json:"manifest_path_posix"`
	PackageName       string   `json:"package_name"`
	Version           string   `json:"version"`
	ArtifactsIncluded []string `json:"artifacts_included"`
	TotalArtifacts    int      `json:"total_artifacts"`
	Provenance        any      `json:"provenance"`
}

var artifactNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// kindOf is the aam.yaml artifacts key and the package folder of type t.
func kindOf(t module.Type) (kind, dir string, ok bool) {
	switch t {
	case module.TypeSkill:
		return "skills", "skills", true
	case module.TypeAgent:
		return "agents", "agents", true
	case module.TypePrompt:
		return "prompts", "prompts", true
	case module.TypeInstructions:
		return "instructions", "instructions", true
	case module.TypeCommand:
		return "commands", "commands", true
	}
	return "", "", false
}

// CreatePackage turns the artifacts detected in dir (skill folders,
// prompts/, commands/, agents/, instructions/, AGENTS.md) into a package
// there: each is copied into the package layout (skills/<n>/,
// agents/<n>.md, …) unless it is already in place, and aam.yaml is
// written. An existing aam.yaml needs Force.
func (e *Engine) CreatePackage(ctx context.Context, dir string, opt CreatePackageOptions) (*CreatePackageData, error) {
	root := abs(e.Env.Abs(dir))
	manifest := root.JoinName(aampkg.ManifestFile)
	if _, err := e.Sys.Stat(manifest); err == nil && !opt.Force {
		return nil, apperr.New(apperr.InvalidArgument, "%s already exists", manifest).
			WithHint("re-run with --force to replace it").With("path", manifest.String())
	}
	found, err := ScanArtifacts(fsys.NewDirFS(e.Sys, root), "")
	if err != nil {
		return nil, err
	}
	var picked []Artifact
	for _, a := range found {
		if _, _, ok := kindOf(a.Type); !ok || (opt.Type != "" && strings.TrimSuffix(opt.Type, "s") != strings.TrimSuffix(string(a.Type), "s")) {
			continue
		}
		if len(opt.Artifacts) > 0 && !slices.Contains(opt.Artifacts, a.Name) {
			continue
		}
		picked = append(picked, a)
	}
	for _, want := range opt.Artifacts {
		if !slices.ContainsFunc(picked, func(a Artifact) bool { return a.Name == want }) {
			return nil, apperr.New(apperr.InvalidArgument, "no artifact called %q was detected in %s", want, root).
				WithHint("run without --artifacts to include everything detected").With("artifact", want)
		}
	}
	if len(picked) == 0 {
		return nil, apperr.New(apperr.InvalidArgument, "no skills, agents, prompts, instructions or commands were detected in %s", root).
			WithHint("a skill is a folder with SKILL.md; prompts, commands, agents and instructions are .md files in folders of those names").With("path", root.String())
	}
	name := opt.Name
	if name == "" {
		name = strings.Trim(regexp.MustCompile(`[^a-z0-9-]+`).ReplaceAllString(strings.ToLower(root.Base()), "-"), "-")
	}
	m := map[string]any{"name": name, "version": orDefault(opt.Version, "0.1.0"), "description": orDefault(opt.Description, "Package "+name+".")}
	arts := map[string][]map[string]string{}
	out := &CreatePackageData{ManifestPath: manifest.String(), ManifestPathPosix: manifest.ToSlash(), PackageName: name,
		Version: m["version"].(string), ArtifactsIncluded: []string{}, TotalArtifacts: len(found)}
	for _, a := range picked {
		kind, folder, _ := kindOf(a.Type)
		n := strings.ToLower(a.Name)
		if !artifactNameRE.MatchString(n) {
			return nil, apperr.New(apperr.InvalidArgument, "artifact name %q is not a valid package artifact name", a.Name).
				WithHint("rename it to lowercase letters, digits and '-'").With("artifact", a.Name)
		}
		dest := folder + "/" + n
		if a.Type != module.TypeSkill {
			dest += ".md"
		}
		if dest != a.Path {
			if err := e.copyInto(root, a.Path, dest); err != nil {
				return nil, err
			}
		}
		arts[kind] = append(arts[kind], map[string]string{"name": n, "path": dest, "description": a.Description})
		out.ArtifactsIncluded = append(out.ArtifactsIncluded, n)
	}
	m["artifacts"] = arts
	var doc yaml.Node
	if err := doc.Encode(m); err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode aam.yaml")
	}
	orderKeys(&doc, []string{"name", "version", "description", "artifacts"})
	data, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode aam.yaml")
	}
	if _, probs, err := aampkg.ParseManifest(data); err != nil || len(probs) > 0 {
		return nil, apperr.New(apperr.ManifestInvalid, "the aam.yaml it would write is not valid: %v", probs).
			WithHint("give --name, --version and --description explicitly")
	}
	return out, e.Sys.WriteFile(manifest, data, 0o644)
}

// copyInto copies the file or folder src (root-relative, '/') to dst.
func (e *Engine) copyInto(root fsys.AbsPath, src, dst string) error {
	from := fsys.AbsPath(filepath.Join(root.String(), filepath.FromSlash(src)))
	to := fsys.AbsPath(filepath.Join(root.String(), filepath.FromSlash(dst)))
	fi, err := e.Sys.Stat(from)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		data, err := e.Sys.ReadFile(from)
		if err != nil {
			return err
		}
		return e.Sys.WriteFile(to, data, fi.Mode().Perm())
	}
	entries, err := e.Sys.ReadDir(from)
	if err != nil {
		return err
	}
	for _, ent := range entries {
		if err := e.copyInto(root, path.Join(src, ent.Name()), path.Join(dst, ent.Name())); err != nil {
			return err
		}
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// orderKeys puts a mapping node's keys in order (yaml encodes maps sorted).
func orderKeys(doc *yaml.Node, order []string) {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	var out []*yaml.Node
	for _, k := range order {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				out = append(out, n.Content[i], n.Content[i+1])
			}
		}
	}
	if len(out) == len(n.Content) {
		n.Content = out
	}
}
