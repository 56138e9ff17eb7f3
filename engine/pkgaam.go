package engine

import (
	"bytes"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentpack/agentpack/engine/pkgcache"
)

// aamAgentDir is where the agent files converted from AAM agent folders
// live inside a cache entry, apart from the archive's own files.
const aamAgentDir = ".agentpack/agents"

// adaptAAMAgents turns AAM agent folders (agents/<n>/agent.yaml plus a
// system-prompt.md) into the one-file agents agentpack deploys: a
// Markdown file with frontmatter name and description and the system
// prompt as its body. The file is derived from the archive alone, so it is
// hashed into the lockfile and verified like the archive's own files.
func adaptAAMAgents(ex *pkgcache.Extracted) {
	byPath := map[string][]byte{}
	for _, f := range ex.Files {
		byPath[f.Path] = f.Data
	}
	agents := ex.Meta.Artifacts["agents"]
	for i, a := range agents {
		dir := strings.TrimSuffix(strings.TrimPrefix(a.Path, "./"), "/")
		spec, ok := byPath[dir+"/agent.yaml"]
		if !ok || strings.HasSuffix(dir, ".md") {
			continue
		}
		var def struct {
			Name         string `yaml:"name"`
			Description  string `yaml:"description"`
			SystemPrompt string `yaml:"system_prompt"`
		}
		if yaml.Unmarshal(spec, &def) != nil {
			continue
		}
		if def.SystemPrompt == "" {
			def.SystemPrompt = "system-prompt.md"
		}
		prompt, ok := byPath[path.Clean(dir+"/"+def.SystemPrompt)]
		if !ok {
			continue
		}
		body, fmDesc := splitFrontmatter(prompt)
		desc := def.Description
		if desc == "" {
			desc = fmDesc
		}
		if desc == "" {
			desc = a.Description
		}
		name := def.Name
		if name == "" {
			name = a.Name
		}
		fm, _ := yaml.Marshal(map[string]string{"name": name, "description": desc})
		var out bytes.Buffer
		out.WriteString("---\n")
		out.Write(fm)
		out.WriteString("---\n")
		out.Write(body)
		p := aamAgentDir + "/" + a.Name + ".md"
		ex.Files = append(ex.Files, pkgcache.File{Path: p, Data: out.Bytes(), Mode: 0o644})
		agents[i].Path = p
	}
}

// splitFrontmatter returns a Markdown file's body and its frontmatter's
// description, if it has one.
func splitFrontmatter(data []byte) (body []byte, description string) {
	s := string(data)
	if !strings.HasPrefix(s, "---\n") {
		return data, ""
	}
	end := strings.Index(s[4:], "\n---")
	if end < 0 {
		return data, ""
	}
	var fm struct {
		Description string `yaml:"description"`
	}
	_ = yaml.Unmarshal([]byte(s[4:4+end]), &fm)
	rest := s[4+end+4:]
	return []byte(strings.TrimPrefix(rest, "\n")), fm.Description
}
