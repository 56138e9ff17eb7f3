package engine

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/go-git/go-git/v5"
)

// initFiles is the example repo `agentpack init` writes: one working module
// of every type (the mcp one is left out of the default profile).
var initFiles = map[string]string{
	manifest.FileName: `version: 1

# Profiles pick modules by tag. "default" is required.
profiles:
  default:
    include_tags: [base]

# Where files go. Scope: user (home dirs), project (the current git repo) or both.
targets:
  codex:
    mode: files
    scope: both
  claude_code:
    mode: files
    scope: both
  cursor:
    mode: files
    scope: project
  vscode:
    mode: files
    scope: project

modules:
  - id: instructions:base
    type: instructions
    tags: [base]
    source:
      local_path:
        path: modules/instructions/base
  - id: skill:hello
    type: skill
    tags: [base]
    source:
      local_path:
        path: modules/skills/hello
  - id: prompt:review
    type: prompt
    tags: [base]
    source:
      local_path:
        path: modules/prompts/review.md
  - id: command:plan
    type: command
    tags: [base]
    source:
      local_path:
        path: modules/commands/ap-plan.md
  - id: agent:reviewer
    type: agent
    tags: [base]
    source:
      local_path:
        path: modules/agents/reviewer.md
  # An MCP server: written as one entry into each client's own config file
  # (~/.claude.json, .cursor/mcp.json, .vscode/mcp.json, ~/.codex/config.toml),
  # leaving everything else in those files alone. Tagged "mcp", which the
  # default profile does not include: add mcp to include_tags to deploy it.
  - id: mcp:filesystem
    type: mcp
    tags: [mcp]
    source:
      local_path:
        path: modules/mcp/filesystem.yaml
`,
	"modules/mcp/filesystem.yaml": `# One MCP server, written into each client's config in its own format.
# Secrets are references (${VAR}), never values.
name: filesystem
transport: stdio
command: npx
args: ["-y", "@modelcontextprotocol/server-filesystem", "."]
`,
	"modules/instructions/base/AGENTS.md": `---
description: Base instructions for every project
---
# Working agreements

- Run the tests before you say a change is done.
- Keep changes small and explain why, not what.
`,
	"modules/skills/hello/SKILL.md": `---
name: hello
description: Greets the user and explains what agentpack deployed.
---
# Hello skill

When the user says hello, answer briefly and list the skills you have.
`,
	"modules/prompts/review.md": `---
description: Review the current diff
---
Review the staged changes. Point out bugs first, then style. $ARGUMENTS
`,
	"modules/commands/ap-plan.md": `---
description: Show what agentpack would change
allowed-tools: Bash(agentpack plan:*)
---
Run ` + "`agentpack plan`" + ` and summarise the changes by target.
`,
	"modules/agents/reviewer.md": `---
name: reviewer
description: A careful code reviewer
---
You review code changes. Be specific, cite lines, and suggest fixes.
`,
	".gitignore": "# agentpack keeps nothing secret here; add local files to ignore below.\n",
}

// InitData is the data of `agentpack init`.
type InitData struct {
	Repo      string   `json:"repo"`
	RepoPosix string   `json:"repo_posix"`
	Created   []string `json:"created"`
	Git       bool     `json:"git"`
}

// InitRepo writes the example repo into dir under the state lock. It
// refuses to touch a folder that already has an agentpack.yaml and never
// overwrites an existing file.
// With withGit it also makes dir a git repository (an existing one is
// kept).
func (e *Engine) InitRepo(ctx context.Context, dir string, withGit bool) (*InitData, error) {
	var out *InitData
	err := e.WithEditLock(ctx, "init", func([]string) error {
		var err error
		if out, err = e.initRepo(dir); err != nil || !withGit {
			return err
		}
		// go-git writes the new .git folder itself: it is created once, here,
		// and nothing of agentpack's state is in it.
		if _, err := git.PlainInit(dir, false); err != nil && err != git.ErrRepositoryAlreadyExists {
			return apperr.Wrap(err, apperr.IOFailed, "cannot create a git repository in %s", dir).WithHint("check the folder's permissions")
		}
		out.Git = true
		return nil
	})
	return out, err
}

func (e *Engine) initRepo(dir string) (*InitData, error) {
	root := abs(dir)
	if _, err := e.Sys.Stat(root.JoinName(manifest.FileName)); err == nil {
		return nil, apperr.New(apperr.InvalidArgument, "%s already has %s", dir, manifest.FileName).
			WithHint("use another --repo, or edit the existing manifest").With("path", filepath.Join(dir, manifest.FileName))
	}
	names := make([]string, 0, len(initFiles))
	for n := range initFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := e.Sys.Lstat(root.Join(fsys.RelPath(n))); err == nil {
			return nil, apperr.New(apperr.InvalidArgument, "%s already exists", filepath.Join(dir, n)).
				WithHint("init writes into an empty folder; move the file or pick another --repo")
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	sys := e.Sys
	out := &InitData{Repo: dir, RepoPosix: filepath.ToSlash(dir), Created: []string{}}
	for _, n := range names {
		if err := sys.WriteFile(root.Join(fsys.RelPath(n)), []byte(initFiles[n]), 0o644); err != nil {
			return nil, err
		}
		out.Created = append(out.Created, n)
	}
	return out, nil
}
