package engine

import (
	"context"

	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// CreatePackageOptions are the arguments of `agentpack create-package`.
type CreatePackageOptions struct {
	// Artifacts names the detected artifacts to include; empty: all of them.
	Artifacts []string
	// Types keeps only artifacts of these types (skill or skills, …).
	Types                      []string
	Name, Version, Description string
	// Force replaces an existing aam.yaml.
	Force bool
	// FromSource is "<source>[/<artifact>]": package artifacts of a
	// registered artifact source (one, or all of them) instead of the
	// folder's own, recording where they came from.
	FromSource string
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

var artifactNameRE = lazyregexp.New(`^[a-z0-9][a-z0-9-]{0,63}$`)

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

// CreatePackage turns the artifacts detected in dir — the AAM layout
// (skills/, prompts/, commands/, agents/, instructions/) and the native
// folders of the clients (.claude/skills, .cursor/rules, .github/prompts,
// AGENTS.md, …) — into a package there: each is copied into the package
// layout (skills/<n>/, agents/<n>.md, …) unless it is already in place, and
// aam.yaml is written. An existing aam.yaml needs Force.
func (e *Engine) CreatePackage(ctx context.Context, req Request, dir string, opt CreatePackageOptions) (*CreatePackageData, []string, error) {
	root := abs(e.Env.Abs(dir))
	manifest := root.JoinName(aampkg.ManifestFile)
	if _, err := e.Sys.Stat(manifest); err == nil && !opt.Force {
		return nil, nil, apperr.New(apperr.InvalidArgument, "%s already exists", manifest).
			WithHint("re-run with --force to replace it").With("path", manifest.String())
	}
	var from pkgOrigin
	var err error
	if opt.FromSource != "" {
		from, err = e.sourceOrigin(ctx, req, opt)
	} else {
		from, err = e.folderOrigin(root, opt)
	}
	if err != nil {
		return nil, from.warnings, err
	}
	out, err := e.writePackage(root, from, opt)
	return out, from.warnings, err
}

// writePackage copies the artifacts of from that opt picks into the package
// folder root and writes its aam.yaml.
func (e *Engine) writePackage(root fsys.AbsPath, from pkgOrigin, opt CreatePackageOptions) (*CreatePackageData, error) {
	manifest := root.JoinName(aampkg.ManifestFile)
	picked, err := pickArtifacts(from, opt)
	if err != nil {
		return nil, err
	}
	name := opt.Name
	if name == "" {
		name = from.defaultName
	}
	m := map[string]any{"name": name, "version": orDefault(opt.Version, "0.1.0"), "description": orDefault(opt.Description, "Package "+name+".")}
	arts := map[string][]map[string]string{}
	out := &CreatePackageData{ManifestPath: manifest.String(), ManifestPathPosix: manifest.ToSlash(), PackageName: name,
		Version: m["version"].(string), ArtifactsIncluded: []string{}, TotalArtifacts: len(from.found)}
	var srcPaths []string
	for _, a := range picked {
		kind, folder, _ := kindOf(a.Type)
		n := packageArtifactName(a.Name)
		if !artifactNameRE.MatchString(n) {
			return nil, apperr.New(apperr.InvalidArgument, "artifact name %q is not a valid package artifact name", a.Name).
				WithHint("rename it to lowercase letters, digits and '-'").With("artifact", a.Name)
		}
		dest := folder + "/" + n
		if !a.dir {
			dest += ".md"
		}
		if from.root != root || dest != a.Path || a.convert != nil {
			if err := e.copyArtifact(joinSlash(from.root, a.Path), joinSlash(root, dest), a, n); err != nil {
				return nil, err
			}
		}
		desc := a.Description
		if desc == "" {
			desc = strings.ToUpper(string(a.Type[:1])) + string(a.Type[1:]) + " " + n // as AAM does: every artifact has one
		}
		arts[kind] = append(arts[kind], map[string]string{"name": n, "path": dest, "description": desc})
		out.ArtifactsIncluded = append(out.ArtifactsIncluded, n)
		srcPaths = append(srcPaths, a.Path)
	}
	m["artifacts"] = arts
	keys := []string{"name", "version", "description", "artifacts"}
	if from.provenance != nil {
		from.provenance.SourceArtifacts = srcPaths
		m["provenance"], out.Provenance = from.provenance, from.provenance
		keys = append(keys, "provenance")
	}
	data, err := encodeManifest(m, keys)
	if err != nil {
		return nil, err
	}
	return out, e.Sys.WriteFile(manifest, data, 0o644)
}

// pkgOrigin is where create-package takes artifacts from.
type pkgOrigin struct {
	// root is the folder the artifacts' paths are relative to.
	root fsys.AbsPath
	// found is everything detected; the options pick from it.
	found       []pkgArtifact
	defaultName string
	// artifact is the one artifact a --from-source <source>/<artifact>
	// names ("" for all).
	artifact   string
	provenance *sourceProvenance
	warnings   []string
}

// folderOrigin detects the artifacts of the package folder itself.
func (e *Engine) folderOrigin(root fsys.AbsPath, opt CreatePackageOptions) (pkgOrigin, error) {
	found, warnings, err := detectPackageArtifacts(fsys.NewDirFS(e.Sys, root), "")
	if err != nil {
		return pkgOrigin{}, err
	}
	found = slices.DeleteFunc(found, func(a pkgArtifact) bool {
		if a.Path == "" { // the folder is itself a skill: it cannot hold its own copy
			warnings = append(warnings, root.String()+" is itself a skill (SKILL.md); create the package in a folder that holds it")
		}
		return a.Path == ""
	})
	return pkgOrigin{root: root, found: found, defaultName: packageArtifactName(root.Base()), warnings: warnings}, nil
}

// pickArtifacts applies --artifacts, --type and a named source artifact.
func pickArtifacts(from pkgOrigin, opt CreatePackageOptions) ([]pkgArtifact, error) {
	want := opt.Artifacts
	if from.artifact != "" {
		want = append([]string{from.artifact}, want...)
	}
	matches := artifactMatches
	var picked []pkgArtifact
	for _, a := range from.found {
		sameType := func(t string) bool { return strings.TrimSuffix(t, "s") == strings.TrimSuffix(string(a.Type), "s") }
		if _, _, ok := kindOf(a.Type); !ok || len(opt.Types) > 0 && !slices.ContainsFunc(opt.Types, sameType) {
			continue
		}
		if len(want) > 0 && !slices.ContainsFunc(want, func(w string) bool { return matches(a, w) }) {
			continue
		}
		picked = append(picked, a)
	}
	for _, w := range want {
		if !slices.ContainsFunc(picked, func(a pkgArtifact) bool { return matches(a, w) }) {
			names := make([]string, 0, len(from.found))
			for _, a := range from.found {
				names = append(names, a.Name)
			}
			return nil, apperr.New(apperr.InvalidArgument, "no artifact called %q was detected in %s", w, from.root).
				WithHint("detected: %s", orDefault(strings.Join(names, ", "), "nothing")).With("artifact", w).With("detected", names)
		}
	}
	if len(picked) == 0 {
		return nil, apperr.New(apperr.InvalidArgument, "no skills, agents, prompts, instructions or commands were detected in %s", from.root).
			WithHint("a skill is a folder with SKILL.md; prompts, commands, agents and instructions are .md files in folders of those names "+
				"or in a client's folders (.claude/, .cursor/rules, .github/prompts, AGENTS.md)").With("path", from.root.String())
	}
	return picked, nil
}

// artifactMatches says whether w names a: by its name or its path (from
// the source's root or its scanned folder).
func artifactMatches(a pkgArtifact, w string) bool {
	w = strings.Trim(w, "/")
	return a.Name == w || a.Path == w || strings.HasSuffix(a.Path, "/"+w)
}

// joinSlash is root joined with the '/'-separated relative path p
// (root itself for "").
func joinSlash(root fsys.AbsPath, p string) fsys.AbsPath {
	if p == "" {
		return root
	}
	return root.Join(fsys.RelPath(p))
}

var nonNameRE = lazyregexp.New(`[^a-z0-9-]+`)

// packageArtifactName turns a detected name into a valid package or
// artifact name where it can (lowercase, '-' for other characters).
func packageArtifactName(s string) string {
	return strings.Trim(nonNameRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// encodeManifest writes m as aam.yaml with keys in order, refusing what
// would not validate.
func encodeManifest(m map[string]any, keys []string) ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(m); err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode aam.yaml")
	}
	orderKeys(&doc, keys)
	data, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode aam.yaml")
	}
	if _, probs, err := aampkg.ParseManifest(data); err != nil || len(probs) > 0 {
		return nil, apperr.New(apperr.ManifestInvalid, "the aam.yaml it would write is not valid: %v", probs).
			WithHint("give --name, --version and --description explicitly")
	}
	return data, nil
}

// copyArtifact copies one artifact to dst: a folder without agentpack's
// deploy manifests, or a file, converted when it needs to be.
func (e *Engine) copyArtifact(src, dst fsys.AbsPath, a pkgArtifact, name string) error {
	if a.convert == nil {
		return e.copyInto(src, dst)
	}
	data, err := e.Sys.ReadFile(src)
	if err != nil {
		return err
	}
	return e.Sys.WriteFile(dst, a.convert(name, data), 0o644)
}

// copyInto copies the file or folder src to dst, leaving out agentpack's
// deploy manifests.
func (e *Engine) copyInto(src, dst fsys.AbsPath) error {
	fi, err := e.Sys.Stat(src)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		data, err := e.Sys.ReadFile(src)
		if err != nil {
			return err
		}
		return e.Sys.WriteFile(dst, data, fi.Mode().Perm())
	}
	entries, err := e.Sys.ReadDir(src)
	if err != nil {
		return err
	}
	for _, ent := range entries {
		if strings.HasPrefix(ent.Name(), ".agentpack.manifest") || ent.Name() == ".git" {
			continue
		}
		if err := e.copyInto(src.JoinName(ent.Name()), dst.JoinName(ent.Name())); err != nil {
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
