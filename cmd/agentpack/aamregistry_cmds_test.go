package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// aamFile is one file of a package as AAM's `pack` walks it.
type aamFile struct{ path, body string }

// aamPackage is one version AAM publishes.
type aamPackage struct {
	name, version, description string
	author                     string // "" is None, written as null
	keywords                   []string
	files                      []aamFile // in os.walk order, aam.yaml among them
}

// pyTime is a timestamp as Python's datetime.now(UTC).isoformat() writes it.
const pyTime = "2026-02-05T10:11:12.345678+00:00"

// aamregistry DIR: write a local registry into DIR exactly as AAM 0.1
// (registry/local.py) lays one out: PyYAML safe_dump files in AAM's key
// order with Python timestamps and nulls, `artifact_types: []` in the
// index, and archives made by Python's tarfile (PAX, files only in walk
// order with aam.yaml last, real modes, owners and times, a gzip header
// with a name and time). The packages hold an AAM agent folder
// (agent.yaml + system-prompt.md), an instruction .md, a skill with a path
// too long for ustar, a prompt, and a dependency written as AAM's comma
// range on a scoped package with two versions.
func cmdAAMRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: aamregistry dir")
	}
	root := ts.MkAbs(args[0])
	long := "skills/python-reviewer/references/" + strings.Repeat("a-very-long-reference-name-", 4) + "end.md"
	pkgs := []aamPackage{
		{name: "@acme/base", version: "1.0.0", description: "Base rules.", files: []aamFile{
			{"instructions/base-rules.md", "---\nname: base-rules\ndescription: Base rules.\nscope: project\n---\nBe careful.\n"},
			{"aam.yaml", "name: '@acme/base'\nversion: 1.0.0\ndescription: Base rules.\nartifacts:\n  agents: []\n  skills: []\n  prompts: []\n  instructions:\n  - name: base-rules\n    path: instructions/base-rules.md\n    description: Base rules.\ndependencies: {}\n"},
		}},
		{name: "@acme/base", version: "1.1.0", description: "Base rules.", files: []aamFile{
			{"instructions/base-rules.md", "---\nname: base-rules\ndescription: Base rules.\nscope: project\n---\nBe very careful.\n"},
			{"aam.yaml", "name: '@acme/base'\nversion: 1.1.0\ndescription: Base rules.\nartifacts:\n  agents: []\n  skills: []\n  prompts: []\n  instructions:\n  - name: base-rules\n    path: instructions/base-rules.md\n    description: Base rules.\ndependencies: {}\n"},
		}},
		{name: "python-best-practices", version: "1.0.0", description: "Python review helpers.", author: "Jane Doe", keywords: []string{"python", "review"}, files: []aamFile{
			{"skills/python-reviewer/SKILL.md", "---\nname: python-reviewer\ndescription: Review Python code.\n---\nReview it.\n"},
			{long, "reference\n"},
			{"agents/code-reviewer/system-prompt.md", "You are a careful code reviewer.\n"},
			{"agents/code-reviewer/agent.yaml", "name: code-reviewer\ndescription: Reviews code for bugs.\nversion: 1.0.0\nsystem_prompt: system-prompt.md\nskills:\n- python-reviewer\ntools:\n- file_read\n"},
			{"prompts/refactor.md", "---\nname: refactor\ndescription: Refactor a function.\n---\nRefactor {{target}}.\n"},
			{"instructions/python-standards.md", "---\nname: python-standards\ndescription: Python standards.\nscope: project\nglobs: '**/*.py'\n---\nUse type hints.\n"},
			{"aam.yaml", "name: python-best-practices\nversion: 1.0.0\ndescription: Python review helpers.\nauthor: Jane Doe\nlicense: Apache-2.0\nkeywords:\n- python\n- review\nartifacts:\n" +
				"  agents:\n  - name: code-reviewer\n    path: agents/code-reviewer/\n    description: Reviews code for bugs.\n" +
				"  skills:\n  - name: python-reviewer\n    path: skills/python-reviewer/\n    description: Review Python code.\n" +
				"  prompts:\n  - name: refactor\n    path: prompts/refactor.md\n    description: Refactor a function.\n" +
				"  instructions:\n  - name: python-standards\n    path: instructions/python-standards.md\n    description: Python standards.\n" +
				"dependencies:\n  '@acme/base': '>=1.0.0,<2.0.0'\nplatforms:\n  cursor:\n    skill_scope: project\n    deploy_instructions_as: rules\n"},
		}},
	}
	write := func(rel, body string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o775))
		ts.Check(os.WriteFile(p, []byte(body), 0o664))
	}
	write("registry.yaml", "name: "+filepath.Base(root)+"\ntype: local\ndescription: Local registry at "+root+"\napi_version: 1\ncreated_at: '"+pyTime+"'\n")
	meta := map[string]string{}
	for _, p := range pkgs {
		archive := pyTarball(ts, p)
		disk := strings.Replace(strings.TrimPrefix(p.name, "@"), "/", "--", 1)
		write("packages/"+disk+"/versions/"+p.version+".aam", string(archive))
		sum := sha256.Sum256(archive)
		deps := "{}"
		if strings.Contains(p.name, "python") {
			deps = "\n      '@acme/base': '>=1.0.0,<2.0.0'"
		}
		version := fmt.Sprintf("  - version: %s\n    published: '%s'\n    checksum: sha256:%s\n    size: %d\n    dependencies: %s\n",
			p.version, pyTime, hex.EncodeToString(sum[:]), len(archive), deps)
		if meta[disk] == "" {
			meta[disk] = fmt.Sprintf("name: %s\ndescription: %s\nauthor: %s\nlicense: %s\nrepository: null\nkeywords: %s\ndist_tags:\n  latest: %%s\nversions:\n",
				pyScalar(p.name), p.description, orNull(p.author), orNull(map[bool]string{true: "Apache-2.0"}[p.author != ""]), pyList(p.keywords, ""))
		}
		meta[disk] += version
		meta[disk+"@"] = p.version
	}
	index := "packages:\n"
	for _, disk := range []string{"acme--base", "python-best-practices"} { // sorted(packages_dir.iterdir())
		write("packages/"+disk+"/metadata.yaml", fmt.Sprintf(meta[disk], meta[disk+"@"]))
		var p aamPackage
		for _, q := range pkgs {
			if strings.Replace(strings.TrimPrefix(q.name, "@"), "/", "--", 1) == disk {
				p = q
			}
		}
		index += fmt.Sprintf("- name: %s\n  description: %s\n  latest: %s\n  keywords: %s\n  artifact_types: []\n  updated_at: '%s'\n",
			pyScalar(p.name), p.description, meta[disk+"@"], pyList(p.keywords, "  "), pyTime)
	}
	write("index.yaml", index)
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// pyScalar quotes what PyYAML quotes among our names (a leading '@').
func pyScalar(s string) string {
	if strings.HasPrefix(s, "@") {
		return "'" + s + "'"
	}
	return s
}

// pyList writes a block list the way PyYAML's safe_dump does.
func pyList(items []string, indent string) string {
	if len(items) == 0 {
		return "[]"
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString("\n" + indent + "- " + it)
	}
	return b.String()
}

// pyTarball is the archive Python's tarfile.open("w:gz") + tar.add writes.
func pyTarball(ts *testscript.TestScript, p aamPackage) []byte {
	var buf bytes.Buffer
	mtime := time.Date(2026, 2, 5, 10, 11, 12, 345678000, time.UTC)
	zw := gzip.NewWriter(&buf)
	zw.Name, zw.ModTime = strings.ReplaceAll(strings.TrimPrefix(p.name, "@"), "/", "-")+"-"+p.version+".aam", mtime
	tw := tar.NewWriter(zw)
	for _, f := range p.files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.path, Size: int64(len(f.body)), Mode: 0o664, Uid: 1000, Gid: 1000,
			Uname: "jane", Gname: "jane", ModTime: mtime, Format: tar.FormatPAX}
		ts.Check(tw.WriteHeader(h))
		_, err := tw.Write([]byte(f.body))
		ts.Check(err)
	}
	ts.Check(tw.Close())
	ts.Check(zw.Close())
	return buf.Bytes()
}

// aamcheck DIR: read the local registry in DIR as AAM 0.1's reader does
// (pydantic models PackageIndexEntry, PackageMetadata, VersionInfo,
// PackageManifest, ArtifactRef) and fail on anything it would refuse:
// a missing required field, a null where a list is needed, a checksum or
// size that does not match the archive, an artifact without a
// description or whose path the archive lacks.
func cmdAAMCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: aamcheck dir")
	}
	root := ts.MkAbs(args[0])
	for _, err := range aamCheck(root) {
		ts.Logf("AAM would refuse: %v", err)
	}
	if errs := aamCheck(root); len(errs) > 0 {
		ts.Fatalf("%d problem(s)", len(errs))
	}
}

func aamCheck(root string) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	load := func(rel string) map[string]any {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			fail("%s: %v", rel, err)
			return nil
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			fail("%s: %v", rel, err)
		}
		return m
	}
	need := func(where string, m map[string]any, kind string, keys ...string) {
		for _, k := range keys {
			v, ok := m[k]
			if !ok {
				fail("%s: %s is missing", where, k)
				continue
			}
			if !aamType(v, kind) {
				fail("%s: %s is %T, AAM needs a %s", where, k, v, kind)
			}
		}
	}
	optional := func(where string, m map[string]any, kind string, keys ...string) {
		for _, k := range keys {
			if v, ok := m[k]; ok && !aamType(v, kind) && !(v == nil && kind == "str") {
				fail("%s: %s is %T, AAM needs a %s", where, k, v, kind)
			}
		}
	}
	reg := load("registry.yaml")
	need("registry.yaml", reg, "str", "name", "type", "description", "created_at")
	need("registry.yaml", reg, "int", "api_version")
	idx := load("index.yaml")
	entries, _ := idx["packages"].([]any)
	if _, ok := idx["packages"].([]any); !ok {
		fail("index.yaml: packages is not a list")
	}
	for i, e := range entries {
		m, _ := e.(map[string]any)
		where := fmt.Sprintf("index.yaml packages[%d]", i)
		need(where, m, "str", "name", "description", "latest")
		optional(where, m, "list", "keywords", "artifact_types")
		optional(where, m, "str", "updated_at")
		name, _ := m["name"].(string)
		disk := strings.Replace(strings.TrimPrefix(name, "@"), "/", "--", 1)
		md := load("packages/" + disk + "/metadata.yaml")
		where = "packages/" + disk + "/metadata.yaml"
		need(where, md, "str", "name", "description")
		optional(where, md, "str", "author", "license", "repository")
		optional(where, md, "list", "keywords")
		optional(where, md, "map", "dist_tags")
		vers, _ := md["versions"].([]any)
		for j, v := range vers {
			vm, _ := v.(map[string]any)
			vw := fmt.Sprintf("%s versions[%d]", where, j)
			need(vw, vm, "str", "version", "published", "checksum")
			need(vw, vm, "int", "size")
			optional(vw, vm, "map", "dependencies")
			ver, _ := vm["version"].(string)
			data, err := os.ReadFile(filepath.Join(root, "packages", disk, "versions", ver+".aam"))
			if err != nil {
				fail("%s: %v", vw, err)
				continue
			}
			sum := sha256.Sum256(data)
			if vm["checksum"] != "sha256:"+hex.EncodeToString(sum[:]) || vm["size"] != len(data) {
				fail("%s: checksum or size does not match the archive", vw)
			}
			errs = append(errs, aamCheckArchive(vw, data)...)
		}
	}
	return errs
}

var aamArtifactName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// aamCheckArchive reads an archive's aam.yaml as PackageManifest does.
func aamCheckArchive(where string, data []byte) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(where+": "+format, a...)) }
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return []error{fmt.Errorf("%s: %v", where, err)}
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return []error{fmt.Errorf("%s: %v", where, err)}
		}
		b, _ := io.ReadAll(tr)
		files[strings.TrimPrefix(h.Name, "./")] = b
	}
	var m map[string]any
	if err := yaml.Unmarshal(files["aam.yaml"], &m); err != nil || m == nil {
		return []error{fmt.Errorf("%s: aam.yaml: missing or not YAML (%v)", where, err)}
	}
	for _, k := range []string{"name", "version", "description"} {
		if s, ok := m[k].(string); !ok || strings.TrimSpace(s) == "" {
			fail("aam.yaml: %s is missing or empty", k)
		}
	}
	for _, k := range []string{"keywords"} {
		if v, ok := m[k]; ok && !aamType(v, "list") {
			fail("aam.yaml: %s is %T, AAM needs a list", k, v)
		}
	}
	for _, k := range []string{"dependencies", "platforms"} {
		if v, ok := m[k]; ok && !aamType(v, "map") {
			fail("aam.yaml: %s is %T, AAM needs a mapping", k, v)
		}
	}
	arts, ok := m["artifacts"].(map[string]any)
	if !ok {
		fail("aam.yaml: artifacts is missing")
	}
	total := 0
	for _, kind := range []string{"agents", "skills", "prompts", "instructions"} {
		v, ok := arts[kind]
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			fail("aam.yaml: artifacts.%s is %T, AAM needs a list", kind, v)
			continue
		}
		for i, a := range list {
			total++
			am, _ := a.(map[string]any)
			aw := fmt.Sprintf("aam.yaml: artifacts.%s[%d]", kind, i)
			for _, k := range []string{"name", "path", "description"} {
				if _, ok := am[k].(string); !ok {
					fail("%s.%s is missing (AAM requires it)", aw[len("aam.yaml: "):], k)
				}
			}
			if n, _ := am["name"].(string); !aamArtifactName.MatchString(n) {
				fail("%s.name %q is not a valid AAM name", aw, n)
			}
			p, _ := am["path"].(string)
			p = strings.TrimSuffix(path.Clean(strings.TrimPrefix(p, "./")), "/")
			found := false
			for f := range files {
				if f == p || strings.HasPrefix(f, p+"/") {
					found = true
				}
			}
			if !found {
				fail("%s.path %q is not in the archive", aw, p)
			}
		}
	}
	if total == 0 {
		fail("aam.yaml: no agents, skills, prompts or instructions (AAM needs at least one)")
	}
	return errs
}

// aamType reports whether a decoded YAML value has the pydantic type kind.
func aamType(v any, kind string) bool {
	switch kind {
	case "str":
		_, ok := v.(string)
		return ok
	case "int":
		_, ok := v.(int)
		return ok
	case "list":
		_, ok := v.([]any)
		return ok
	case "map":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}
