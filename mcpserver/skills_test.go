package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// skillsRepo writes a repo with four skill modules into te.Repo: pdf (nested
// folders, an empty file, a binary file, frontmatter beyond name and
// description), two modules that both name their skill "review", one whose
// name breaks the naming rules, lint from a local git upstream (locked), and
// one outside the default profile.
func skillsRepo(t *testing.T, te *testEnv) {
	t.Helper()
	up := gitRepo(t)
	files := map[string]string{
		"agentpack.yaml": `version: 1
profiles: {default: {include_tags: [base]}}
targets: {claude_code: {scope: both}, codex: {scope: project}}
modules:
  - {id: "skill:pdf", type: skill, tags: [base], source: {local_path: {path: modules/pdf}}}
  - {id: "skill:review", type: skill, tags: [base], source: {local_path: {path: modules/review}}}
  - {id: "skill:review-copy", type: skill, tags: [base], source: {local_path: {path: modules/review2}}}
  - {id: "skill:bad", type: skill, tags: [base], source: {local_path: {path: modules/bad}}}
  - {id: "skill:lint", type: skill, tags: [base], source: {git: {url: "file://` + filepath.ToSlash(up) + `", subdir: skills/lint}}}
  - {id: "skill:later", type: skill, tags: [work], source: {local_path: {path: modules/later}}}
`,
		"modules/pdf/SKILL.md":                     "---\nname: pdf-processing\ndescription: Fill PDF forms\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1\"\n  tags: [a, b]\n---\n# PDF\n\nPick a template from `templates/`.\n",
		"modules/pdf/templates/invoice.md":         "# Invoice\n",
		"modules/pdf/templates/regional/eu.md":     "# EU invoice\n",
		"modules/pdf/scripts/empty.txt":            "",
		"modules/pdf/assets/logo.png":              "\x89PNG\r\n\x1a\n\x00\x00\xff",
		"modules/review/SKILL.md":                  "---\nname: review\ndescription: Reviews code\n---\nOne.\n",
		"modules/review2/SKILL.md":                 "---\nname: review\ndescription: Reviews code, too\n---\nTwo.\n",
		"modules/bad/SKILL.md":                     "---\nname: Bad Name\ndescription: Breaks the naming rules\n---\n",
		"modules/later/SKILL.md":                   "---\nname: later\ndescription: Only in the work profile\n---\n",
		"modules/pdf/templates/regional/README.md": "Regional templates.\n",
	}
	if err := os.RemoveAll(te.Repo); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(te.Repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := engine.New(te.Env, targets.NewSet()).Lock(context.Background(), engine.Request{Repo: te.Repo}); err != nil {
		t.Fatalf("lock: %v", err)
	}
}

// skillsClient connects an in-memory client that can call the extension's
// methods.
func skillsClient(t testing.TB, s *Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](c, methodListSkills),
		mcp.AddSendingCustomMethod[*getSkillParams, *getSkillResult](c, methodGetSkill),
		mcp.AddSendingCustomMethod[*readDirectoryParams, *readDirectoryResult](c, methodReadDirectory),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func listAllSkills(t *testing.T, cs *mcp.ClientSession) (all []skillEntry, pages int, meta mcp.Meta) {
	t.Helper()
	cursor := ""
	for {
		res, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](context.Background(), cs, methodListSkills, &listSkillsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("skills/list: %v", err)
		}
		if res.ResultType != "complete" || res.CacheScope != "private" || res.TTLMs != 0 {
			t.Fatalf("skills/list hints: %+v", res.cacheHints)
		}
		if meta == nil {
			meta = res.Meta
		}
		all, pages = append(all, res.Skills...), pages+1
		if cursor = res.NextCursor; cursor == "" {
			return all, pages, meta
		}
		if pages > 10 {
			t.Fatal("skills/list never ends")
		}
	}
}

func rpcCode(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestSkillsExtension drives the extension over an in-memory session:
// the capability, paged skills/list, skills/get, resources/read of every
// file byte for byte equal to what a deploy writes (digest and size
// checked), a skill from a git source, colliding names, and the names and
// limits that keep a skill out.
func TestSkillsExtension(t *testing.T) {
	te := newTestEnv(t)
	skillsRepo(t, te)
	cs := skillsClient(t, te.server(t, func(o *Options) { o.SkillsPageSize = 2 }))
	ctx := context.Background()

	caps := cs.InitializeResult().Capabilities
	if ext, ok := caps.Extensions[SkillsExtension].(map[string]any); !ok || ext["directoryRead"] != true || caps.Resources == nil {
		t.Fatalf("capabilities: extensions %v, resources %v", caps.Extensions, caps.Resources)
	}

	all, pages, meta := listAllSkills(t, cs)
	var uris []string
	for _, s := range all {
		uris = append(uris, s.URI)
	}
	want := []string{"skill://lint/SKILL.md", "skill://pdf-processing/SKILL.md",
		"skill://skill_review-copy/review/SKILL.md", "skill://skill_review/review/SKILL.md"}
	if !slices.Equal(uris, want) || pages != 2 {
		t.Fatalf("skills/list over %d pages = %v, want %v over 2", pages, uris, want)
	}
	warnings, _ := meta[warningsMetaKey].([]any)
	joined := ""
	for _, w := range warnings {
		joined += w.(string) + "\n"
	}
	for _, w := range []string{`skill name "review" is used by modules skill:review, skill:review-copy`, `skill:bad is not served over MCP: its name "Bad Name"`} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}

	// Deploy for real into the temp HOME and project: every file read over
	// MCP is byte for byte the deployed one.
	if _, _, err := engine.New(te.Env, targets.NewSet()).Deploy(ctx, engine.Request{Repo: te.Repo}, true, engine.ApplyOptions{}); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	deployed := map[string]string{ // skill URI → deployed folder of claude_code (user scope)
		"skill://pdf-processing/SKILL.md":           "pdf",
		"skill://lint/SKILL.md":                     "lint",
		"skill://skill_review/review/SKILL.md":      "review",
		"skill://skill_review-copy/review/SKILL.md": "review-copy",
	}
	for _, s := range all {
		dir := filepath.Join(te.Home, ".claude", "skills", deployed[s.URI])
		root := strings.TrimSuffix(s.URI, "SKILL.md")
		var names []string
		for _, r := range s.Resources {
			rel := strings.TrimPrefix(r.URI, root)
			names = append(names, rel)
			disk, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil {
				t.Fatalf("%s: deployed file: %v", r.URI, err)
			}
			c, err := readURI(t, cs, r.URI)
			if err != nil {
				t.Fatalf("read %s: %v", r.URI, err)
			}
			got := []byte(c.Text)
			if c.Blob != nil {
				got = c.Blob
			}
			if string(got) != string(disk) || sha(got) != r.Digest || int64(len(got)) != r.Size {
				t.Errorf("%s: read %q (%s, %d bytes), deployed %q, listed %s %d", r.URI, got, sha(got), len(got), disk, r.Digest, r.Size)
			}
		}
		// The listing is complete: every deployed file, nothing else.
		var onDisk []string
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				onDisk = append(onDisk, filepath.ToSlash(rel))
			}
			return nil
		})
		if !slices.Equal(names, onDisk) {
			t.Errorf("%s lists %v, deployed %v", s.URI, names, onDisk)
		}
	}

	// The SKILL.md is markdown; frontmatter comes through whole.
	pdf := all[1]
	if pdf.Frontmatter["license"] != "Apache-2.0" || pdf.Frontmatter["metadata"].(map[string]any)["version"] != "2.1" || pdf.Frontmatter["name"] != "pdf-processing" {
		t.Errorf("frontmatter = %v", pdf.Frontmatter)
	}
	for uri, mime := range map[string]string{"skill://pdf-processing/SKILL.md": mimeMarkdown, "skill://pdf-processing/assets/logo.png": "image/png",
		"skill://pdf-processing/templates/invoice.md": mimeMarkdown} {
		if c, err := readURI(t, cs, uri); err != nil || c.MIMEType != mime {
			t.Errorf("%s: mime %v, want %s (%v)", uri, c, mime, err)
		}
	}
	// An empty file is an empty blob: an empty text would vanish.
	if c, _ := readURI(t, cs, "skill://pdf-processing/scripts/empty.txt"); c == nil || c.Blob == nil || len(c.Blob) != 0 {
		t.Errorf("empty file: %+v", c)
	}

	// skills/get answers each listed entry identically, and -32602 for
	// anything that is not a served SKILL.md.
	for _, s := range all {
		got, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, cs, methodGetSkill, &getSkillParams{URI: s.URI})
		if err != nil || got.Skill.URI != s.URI || len(got.Skill.Resources) != len(s.Resources) || got.ResultType != "complete" || got.CacheScope != "private" {
			t.Fatalf("skills/get %s: %+v %v", s.URI, got, err)
		}
	}
	for _, uri := range []string{"skill://review/SKILL.md", "skill://later/SKILL.md", "skill://bad/SKILL.md", "skill://pdf-processing/templates/invoice.md",
		"skill://pdf-processing", "skill://nope/SKILL.md", "agentpack://config"} {
		if _, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, cs, methodGetSkill, &getSkillParams{URI: uri}); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("skills/get %s: want -32602, got %v", uri, err)
		}
	}
	// No skill is shadowed: the plain name serves nothing at all.
	if _, err := readURI(t, cs, "skill://review/SKILL.md"); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("skill://review/SKILL.md: want -32602, got %v", err)
	}

	// resources/list shows each SKILL.md for clients without the extension.
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Resource{}
	for _, r := range res.Resources {
		listed[r.URI] = r
	}
	if r := listed["skill://pdf-processing/SKILL.md"]; r == nil || r.Name != "pdf-processing" || r.Description != "Fill PDF forms" || r.MIMEType != mimeMarkdown {
		t.Errorf("resources/list entry: %+v", r)
	}
}

// TestSkillsDirectoryRead lists folders of the namespace, page by page,
// with subfolders as inode/directory; a file or an unknown path is -32602.
func TestSkillsDirectoryRead(t *testing.T) {
	te := newTestEnv(t)
	skillsRepo(t, te)
	cs := skillsClient(t, te.server(t, func(o *Options) { o.SkillsPageSize = 2 }))
	ctx := context.Background()
	read := func(uri string) ([]string, error) {
		var out []string
		cursor := ""
		for range 10 {
			res, err := mcp.CallCustomMethod[*readDirectoryParams, *readDirectoryResult](ctx, cs, methodReadDirectory, &readDirectoryParams{URI: uri, Cursor: cursor})
			if err != nil {
				return nil, err
			}
			if res.ResultType != "complete" {
				t.Fatalf("%s: resultType %q", uri, res.ResultType)
			}
			for _, r := range res.Resources {
				out = append(out, r.Name+" "+r.MIMEType+" "+r.URI)
			}
			if cursor = res.NextCursor; cursor == "" {
				return out, nil
			}
		}
		t.Fatal("directory read never ends")
		return nil, nil
	}
	for uri, want := range map[string][]string{
		"skill://pdf-processing": {
			"SKILL.md text/markdown skill://pdf-processing/SKILL.md",
			"assets inode/directory skill://pdf-processing/assets",
			"scripts inode/directory skill://pdf-processing/scripts",
			"templates inode/directory skill://pdf-processing/templates",
		},
		"skill://pdf-processing/templates": {
			"invoice.md text/markdown skill://pdf-processing/templates/invoice.md",
			"regional inode/directory skill://pdf-processing/templates/regional",
		},
		"skill://pdf-processing/templates/regional": {
			"README.md text/markdown skill://pdf-processing/templates/regional/README.md",
			"eu.md text/markdown skill://pdf-processing/templates/regional/eu.md",
		},
		"skill://skill_review": {"review inode/directory skill://skill_review/review"},
	} {
		got, err := read(uri)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q (%v)\nwant %q", uri, got, err, want)
		}
	}
	for _, uri := range []string{"skill://pdf-processing/SKILL.md", "skill://nope", "skill://pdf-processing/templates/", "skill://pdf-processing/../lint", "skill://later"} {
		if _, err := read(uri); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: want -32602, got %v", uri, err)
		}
	}
	if _, err := mcp.CallCustomMethod[*readDirectoryParams, *readDirectoryResult](ctx, cs, methodReadDirectory,
		&readDirectoryParams{URI: "skill://pdf-processing", Cursor: "!!"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("bad cursor: want -32602, got %v", err)
	}
}

// TestSkillsTraversalRefused checks that no skill:// URI with a dot
// segment, an empty segment or an escaped separator, plain or
// percent-encoded, reaches a file: resources/read, skills/get and
// resources/directory/read all refuse it with -32602 and
// E_IO_INVALID_PATH.
func TestSkillsTraversalRefused(t *testing.T) {
	te := newTestEnv(t)
	skillsRepo(t, te)
	// A file just outside the skill folders that a traversal would reach.
	if err := os.WriteFile(filepath.Join(te.Repo, "modules", "secret.md"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := skillsClient(t, te.server(t))
	ctx := context.Background()
	for _, uri := range []string{
		"skill://pdf-processing/../secret.md",
		"skill://pdf-processing/%2e%2e/secret.md",
		"skill://pdf-processing/%2E%2E/%2E%2E/agentpack.yaml",
		"skill://pdf-processing/templates%2F..%2F..%2Fsecret.md",
		"skill://pdf-processing/templates/..%2fSKILL.md",
		"skill://pdf-processing/./SKILL.md",
		"skill://pdf-processing//SKILL.md",
		"skill://../pdf-processing/SKILL.md",
		"skill://pdf-processing/..\\SKILL.md",
		"skill://pdf-processing/%00/SKILL.md",
		"skill://pdf-processing/SKILL.md?x=1",
		"skill://pdf-processing/%zz/SKILL.md",
	} {
		_, err := readURI(t, cs, uri)
		if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "E_IO_INVALID_PATH") {
			t.Errorf("read %s: want -32602 [E_IO_INVALID_PATH], got %v", uri, err)
		}
		if _, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, cs, methodGetSkill, &getSkillParams{URI: uri}); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("get %s: want -32602, got %v", uri, err)
		}
		if _, err := mcp.CallCustomMethod[*readDirectoryParams, *readDirectoryResult](ctx, cs, methodReadDirectory, &readDirectoryParams{URI: uri}); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("directory read %s: want -32602, got %v", uri, err)
		}
	}
	// Escapes that decode to ordinary names still work.
	if c, err := readURI(t, cs, "skill://pdf%2Dprocessing/templates/invoice%2Emd"); err != nil || c.Text != "# Invoice\n" {
		t.Errorf("escaped name: %v %v", c, err)
	}
}

// TestSkillsDisabled checks that --skills=false (DisableSkills) and a
// --toolsets list without skills leave nothing of the extension: no
// capability, no methods, no skill:// resources.
func TestSkillsDisabled(t *testing.T) {
	te := newTestEnv(t)
	skillsRepo(t, te)
	for name, opt := range map[string]func(*Options){
		"--skills=false":   func(o *Options) { o.DisableSkills = true },
		"--toolsets core":  func(o *Options) { o.Toolsets = []string{"core", "resources"} },
		"both, write mode": func(o *Options) { o.DisableSkills = true; o.AllowWrite = true },
	} {
		t.Run(name, func(t *testing.T) {
			cs := skillsClient(t, te.server(t, opt))
			ctx := context.Background()
			if ext := cs.InitializeResult().Capabilities.Extensions; len(ext) != 0 {
				t.Errorf("extensions declared: %v", ext)
			}
			if _, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, cs, methodListSkills, &listSkillsParams{}); rpcCode(err) != jsonrpc.CodeMethodNotFound {
				t.Errorf("skills/list: want method not found, got %v", err)
			}
			if _, err := mcp.CallCustomMethod[*readDirectoryParams, *readDirectoryResult](ctx, cs, methodReadDirectory, &readDirectoryParams{URI: "skill://lint"}); rpcCode(err) != jsonrpc.CodeMethodNotFound {
				t.Errorf("resources/directory/read: want method not found, got %v", err)
			}
			if _, err := readURI(t, cs, "skill://lint/SKILL.md"); err == nil {
				t.Error("skill:// read served")
			}
			res, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Resources {
				if isSkillURI(r.URI) {
					t.Errorf("listed %s", r.URI)
				}
			}
		})
	}
}

// TestSkillsWithoutRepo checks that a server started where no repo exists
// yet lists no skills, with the no-repo warning, instead of failing; a
// named repo without agentpack.yaml and an invalid one stay errors.
func TestSkillsWithoutRepo(t *testing.T) {
	te := newTestEnv(t)
	cs := skillsClient(t, te.server(t, func(o *Options) { o.Defaults.Repo = "" }))
	res, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](context.Background(), cs, methodListSkills, &listSkillsParams{})
	if err != nil || len(res.Skills) != 0 || res.Skills == nil {
		t.Fatalf("skills/list without a repo: %+v %v", res, err)
	}
	if w, _ := res.Meta[warningsMetaKey].([]any); len(w) != 1 || !strings.Contains(w[0].(string), "agentpack init") {
		t.Errorf("warnings = %v", res.Meta)
	}
	named := skillsClient(t, te.server(t, func(o *Options) { o.Defaults.Repo = filepath.Join(te.Home, "nope") }))
	if _, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](context.Background(), named, methodListSkills, &listSkillsParams{}); !strings.Contains(fmt.Sprint(err), "E_CONFIG_MISSING") {
		t.Errorf("named missing repo: %v", err)
	}
	if err := os.WriteFile(filepath.Join(te.Repo, "agentpack.yaml"), []byte("version: 1\nmodules: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := skillsClient(t, te.server(t))
	if _, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](context.Background(), broken, methodListSkills, &listSkillsParams{}); rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "E_CONFIG_INVALID") {
		t.Errorf("invalid repo: %v", err)
	}
}

// A skill from an installed package is served like any other: its
// SKILL.md under the artifact's name, with the bytes the deploy wrote.
func TestSkillsFromAPackage(t *testing.T) {
	te := newTestEnv(t)
	kit := filepath.Join(t.TempDir(), "kit")
	files := map[string]string{
		"aam.yaml":                   "name: \"@acme/review-kit\"\nversion: 1.0.0\ndescription: Review helpers.\nartifacts:\n  skills:\n    - name: pkg-review\n      path: skills/pkg-review\n      description: Review.\n",
		"skills/pkg-review/SKILL.md": "---\nname: pkg-review\ndescription: Review the diff.\n---\nfrom a package\n",
	}
	for rel, body := range files {
		p := filepath.Join(kit, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := engine.New(te.Env, targets.NewSet())
	if _, _, err := e.Install(context.Background(), engine.Request{Repo: te.Repo}, engine.InstallOptions{Specs: []string{kit}}); err != nil {
		t.Fatal(err)
	}
	cs := skillsClient(t, te.server(t))
	all, _, _ := listAllSkills(t, cs)
	found := false
	for _, s := range all {
		found = found || s.URI == "skill://pkg-review/SKILL.md"
	}
	if !found {
		t.Fatalf("the package's skill is not listed: %+v", all)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://pkg-review/SKILL.md"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Contents[0].Text; got != files["skills/pkg-review/SKILL.md"] {
		t.Fatalf("skill://pkg-review/SKILL.md = %q", got)
	}
}
