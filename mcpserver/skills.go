package mcpserver

// The Skills extension (io.modelcontextprotocol/skills, SEP-2640): the
// skills of the selected profile, as a deploy would write them, served as
// skill:// resources with skills/list, skills/get and
// resources/directory/read. go-sdk v1.8.0 has no helper for the extension,
// so the three methods are custom methods (mcp.AddReceivingCustomMethod)
// and resources/read of skill:// URIs is answered in the middleware; this
// file and skilluri.go are all there is to swap for an SDK helper later.

import (
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"sort"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/skillset"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SkillsExtension is the capability key of the Skills extension.
const SkillsExtension = "io.modelcontextprotocol/skills"

// Methods of the Skills extension.
const (
	methodListSkills    = "skills/list"
	methodGetSkill      = "skills/get"
	methodReadDirectory = "resources/directory/read"
)

const (
	// mimeDirectory is the MIME type of a directory resource.
	mimeDirectory = "inode/directory"
	// defaultSkillsPageSize is how many skills (or directory entries) one
	// page holds.
	defaultSkillsPageSize = 100
	// warningsMetaKey carries the skill set's warnings in a result's _meta.
	warningsMetaKey = "agentpack/warnings"
)

type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type readDirectoryParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// cacheHints are the fields every result of the extension carries:
// resultType (2026-07-28) and the CacheableResult hints. State is read
// fresh on every request, so nothing may be cached (ttlMs 0), and what is
// served is the user's own (private).
type cacheHints struct {
	ResultType string `json:"resultType"`
	TTLMs      int    `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

var freshPrivate = cacheHints{ResultType: "complete", TTLMs: 0, CacheScope: "private"}

type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

type listSkillsResult struct {
	mcp.ResultBase
	cacheHints
	Skills     []skillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
}

type getSkillResult struct {
	mcp.ResultBase
	cacheHints
	Skill skillEntry `json:"skill"`
}

type readDirectoryResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// skillsCapability declares the extension on caps.
func skillsCapability(caps *mcp.ServerCapabilities) {
	caps.AddExtension(SkillsExtension, map[string]any{"directoryRead": true})
}

// addSkillMethods registers the extension's methods.
func (s *Server) addSkillMethods() error {
	if err := mcp.AddReceivingCustomMethod(s.mcp, methodListSkills, s.listSkills); err != nil {
		return err
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, methodGetSkill, s.getSkill); err != nil {
		return err
	}
	return mcp.AddReceivingCustomMethod(s.mcp, methodReadDirectory, s.readDirectory)
}

// skills runs the engine's one skills use case on a read-only engine.
// Without a repo (none named, the default one not
// created) the set is empty, with a warning.
func (s *Server) skills(ctx context.Context) (*engine.SkillsResult, error) {
	res, err := s.readEngine().Skills(ctx, s.defaultRequest())
	if w, ok := noRepoWarning(s.defaultRequest(), err); ok {
		// No repo yet: no skills, as plan answers "nothing to do".
		res, err = &engine.SkillsResult{Set: skillset.Empty(), Warnings: []string{w}}, nil
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func entryOf(sk *skillset.Skill) skillEntry {
	e := skillEntry{URI: skillURI(sk.Path, skillset.SkillFile), Frontmatter: sk.Frontmatter, Resources: make([]skillResource, len(sk.Files))}
	for i, f := range sk.Files {
		e.Resources[i] = skillResource{URI: skillURI(sk.Path, f.Path), Digest: f.Digest, Size: f.Size}
	}
	return e
}

func (s *Server) listSkills(ctx context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	res, err := s.skills(ctx)
	if err != nil {
		return nil, rpcError(err)
	}
	all := res.Set.Skills
	start := 0
	if p != nil && p.Cursor != "" {
		after, err := decodeCursor(p.Cursor)
		if err != nil {
			return nil, err
		}
		start = sort.Search(len(all), func(i int) bool { return all[i].Path > after })
	}
	end := min(start+s.pageSize(), len(all))
	out := &listSkillsResult{cacheHints: freshPrivate, Skills: []skillEntry{}}
	for _, sk := range all[start:end] {
		out.Skills = append(out.Skills, entryOf(sk))
	}
	if end < len(all) {
		out.NextCursor = encodeCursor(all[end-1].Path)
	}
	if len(res.Warnings) > 0 {
		out.Meta = mcp.Meta{warningsMetaKey: res.Warnings}
	}
	for _, w := range res.Warnings {
		s.log.Warn("skills/list", "warning", w)
	}
	return out, nil
}

func (s *Server) getSkill(ctx context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("skills/get needs params.uri, the URI of a skill's SKILL.md")
	}
	p2, err := parseSkillURI(p.URI)
	if err != nil {
		return nil, rpcError(err)
	}
	dir, ok := cutSkillFile(p2)
	if !ok {
		return nil, invalidParams(fmt.Sprintf("%s is not the URI of a SKILL.md", capEcho(p.URI)))
	}
	res, err := s.skills(ctx)
	if err != nil {
		return nil, rpcError(err)
	}
	sk := res.Set.Skill(dir)
	if sk == nil {
		return nil, invalidParams(fmt.Sprintf("No skill is served at %s", capEcho(p.URI)))
	}
	return &getSkillResult{cacheHints: freshPrivate, Skill: entryOf(sk)}, nil
}

func (s *Server) readDirectory(ctx context.Context, _ *mcp.ServerSession, p *readDirectoryParams) (*readDirectoryResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("resources/directory/read needs params.uri, the URI of a directory resource")
	}
	dir, err := parseSkillURI(p.URI)
	if err != nil {
		return nil, rpcError(err)
	}
	res, err := s.skills(ctx)
	if err != nil {
		return nil, rpcError(err)
	}
	children, ok := res.Set.ReadDir(dir)
	if !ok {
		if res.Set.File(dir) != nil {
			return nil, invalidParams(fmt.Sprintf("%s is not a directory resource", capEcho(p.URI)))
		}
		return nil, invalidParams(fmt.Sprintf("No directory is served at %s", capEcho(p.URI)))
	}
	start := 0
	if p.Cursor != "" {
		after, err := decodeCursor(p.Cursor)
		if err != nil {
			return nil, err
		}
		start = sort.Search(len(children), func(i int) bool { return children[i].Name > after })
	}
	end := min(start+s.pageSize(), len(children))
	out := &readDirectoryResult{ResultType: "complete", Resources: []*mcp.Resource{}}
	for _, c := range children[start:end] {
		r := &mcp.Resource{URI: skillURI(c.Path, ""), Name: c.Name, MIMEType: mimeDirectory}
		if c.File != nil {
			r.MIMEType, r.Size = skillMIME(c.Name, c.File.Data), c.File.Size
		}
		out.Resources = append(out.Resources, r)
	}
	if end < len(children) {
		out.NextCursor = encodeCursor(children[end-1].Name)
	}
	return out, nil
}

// readSkillResource answers resources/read of a skill:// file with the
// exact bytes a deploy writes: text when they are text, else a blob (an
// empty file is an empty blob: an empty text would be left out).
func (s *Server) readSkillResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	p, err := parseSkillURI(uri)
	if err != nil {
		return nil, rpcError(err)
	}
	res, err := s.skills(ctx)
	if err != nil {
		return nil, rpcError(err)
	}
	f := res.Set.File(p)
	if f == nil {
		if _, isDir := res.Set.ReadDir(p); isDir {
			return nil, invalidParams(fmt.Sprintf("%s is a directory resource: read it with resources/directory/read", capEcho(uri)))
		}
		return nil, mcp.ResourceNotFoundError(capEcho(uri))
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: skillMIME(p, f.Data)}
	switch {
	case len(f.Data) == 0:
		c.Blob = []byte{}
	case isBinary(f.Data):
		c.Blob = f.Data
	default:
		c.Text = string(f.Data)
	}
	out := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
	out.CacheScope = "private"
	return out, nil
}

// skillResources are the SKILL.md files as resources/list shows them, so a
// client without the extension still finds the skills.
func (s *Server) skillResources(ctx context.Context) []*mcp.Resource {
	res, err := s.skills(ctx)
	if err != nil {
		s.log.Warn("skills not listed", "error", err)
		return nil
	}
	var out []*mcp.Resource
	for _, sk := range res.Set.Skills {
		main := res.Set.File(sk.Path + "/" + skillset.SkillFile)
		desc, _ := sk.Frontmatter["description"].(string)
		out = append(out, &mcp.Resource{URI: skillURI(sk.Path, skillset.SkillFile), Name: sk.Name, MIMEType: mimeMarkdown,
			Description: desc, Size: main.Size})
	}
	return out
}

// skillMIME is the MIME type of a skill file: text/markdown for SKILL.md
// and by content and extension otherwise, as for module files.
func skillMIME(name string, data []byte) string {
	if !isBinary(data) && path.Base(name) == skillset.SkillFile {
		return mimeMarkdown
	}
	return mimeFor(name, data)
}

func (s *Server) pageSize() int {
	if s.opts.SkillsPageSize > 0 {
		return s.opts.SkillsPageSize
	}
	return defaultSkillsPageSize
}

// Cursors are the opaque base64 of the last key of the previous page, so
// a page is stable when entries before it come or go.
func encodeCursor(after string) string { return base64.RawURLEncoding.EncodeToString([]byte(after)) }

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 {
		return "", invalidParams(fmt.Sprintf("invalid cursor %q", capEcho(c)))
	}
	return string(b), nil
}

func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// skillURIError is the failure of a skill:// URI that cannot name a file.
func skillURIError(uri, why string) error {
	return apperr.New(apperr.IOInvalidPath, "refusing resource %q: %s", uri, why).
		WithHint("use a URI from skills/list").With("uri", uri).With("reason_code", "path_traversal")
}
