package engine

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
)

// ImportTag is the tag, and ImportProfile the profile, that `import --apply`
// gives the modules it creates.
const (
	ImportTag     = "imported"
	ImportProfile = "imported"
)

// Import plan operations.
const (
	ImportCreate         = "create"
	ImportSkipExisting   = "skip_existing_module"
	ImportSkipInvalid    = "skip_invalid"
	ImportSkipManaged    = "skip_managed"
	ImportSkipDuplicate  = "skip_duplicate"
	conflictDestExists   = "dest_path_exists"
	conflictDuplicateID  = "duplicate_module_id_in_scan"
	conflictDuplicateDst = "duplicate_dest_path"
)

// ImportItem is one entry of the import plan: a module to create from one
// or more identical assets on disk, or an asset that is skipped.
type ImportItem struct {
	Op         string      `json:"op"`
	ModuleID   string      `json:"module_id"`
	ModuleType module.Type `json:"module_type"`
	// Scope is user, project or both (identical assets found at both).
	Scope   string   `json:"scope"`
	Targets []string `json:"targets"`
	Tags    []string `json:"tags"`
	// SourcePath is the first asset; SourcePaths all of them.
	SourcePath       string   `json:"source_path"`
	SourcePathPosix  string   `json:"source_path_posix"`
	SourcePaths      []string `json:"source_paths"`
	SourcePathsPosix []string `json:"source_paths_posix"`
	// DestPath is where the module goes in the repo; ModulePath is the same
	// path relative to the repo, as written to source.local_path.path.
	DestPath      string `json:"dest_path"`
	DestPathPosix string `json:"dest_path_posix"`
	ModulePath    string `json:"module_path"`
	DestExists    bool   `json:"dest_exists"`
	Files         int    `json:"files"`
	SkipReason    string `json:"skip_reason,omitempty"`
}

// ImportSummary counts the plan's items by operation.
type ImportSummary struct {
	Candidates            int `json:"candidates"`
	Create                int `json:"create"`
	SkippedExistingModule int `json:"skipped_existing_module"`
	SkippedInvalid        int `json:"skipped_invalid"`
	SkippedManaged        int `json:"skipped_managed"`
	SkippedDuplicate      int `json:"skipped_duplicate"`
}

// ImportConflict is a problem found while planning: a destination that
// already exists in the repo (blocks --apply) or assets with the same id
// and different content (the later ones are skipped).
type ImportConflict struct {
	Kind     string `json:"kind"`
	Count    int    `json:"count"`
	ModuleID string `json:"module_id,omitempty"`
	// SamplePaths lists up to 20 of the paths involved.
	SamplePaths      []string `json:"sample_paths"`
	SamplePathsPosix []string `json:"sample_paths_posix"`
	Hint             string   `json:"hint"`
}

// ImportData is the data of `agentpack import`.
type ImportData struct {
	Applied bool `json:"applied"`
	// Reason is "dry_run" or "no_changes" when nothing was written.
	Reason           string           `json:"reason,omitempty"`
	Repo             string           `json:"repo"`
	RepoPosix        string           `json:"repo_posix"`
	HomeRoot         string           `json:"home_root"`
	HomeRootPosix    string           `json:"home_root_posix"`
	ProjectRoot      string           `json:"project_root"`
	ProjectRootPosix string           `json:"project_root_posix"`
	Profile          string           `json:"profile"`
	Plan             []ImportItem     `json:"plan"`
	Summary          ImportSummary    `json:"summary"`
	Conflicts        []ImportConflict `json:"conflicts"`
	NextActions      []string         `json:"next_actions"`
}

// ImportOptions are the arguments of `agentpack import`.
type ImportOptions struct {
	// Apply writes the modules; without it nothing is written.
	Apply bool
}

// Import finds assets the four targets already read from the home folder
// and the project (SPEC §5 `import`) and plans one module per asset: files
// copied under modules/ and an entry in agentpack.yaml tagged "imported",
// targeting the tool it came from. Identical assets found for several
// targets or scopes become one module. Files listed in an agentpack target
// manifest are skipped, as are ids agentpack.yaml already has. With Apply
// the plan is written, unless a destination already exists in the repo
// (E_IMPORT_CONFLICT, nothing written).
func (e *Engine) Import(ctx context.Context, req Request, opt ImportOptions) (*ImportData, []string, error) {
	var out *ImportData
	var warnings []string
	run := func(recovered []string) error {
		warnings = recovered
		m, err := e.loadSources(ctx, req)
		if err != nil {
			return err
		}
		warnings = append(warnings, m.Warnings...)
		ip := &importPlanner{e: e, m: m, req: req, managed: map[string][]string{}}
		out = ip.plan()
		warnings = append(warnings, ip.warnings...)
		if !opt.Apply {
			out.Reason = "dry_run"
			return nil
		}
		if out.Summary.Create == 0 {
			out.Reason = "no_changes"
			return nil
		}
		if err := importConflictError(out.Conflicts); err != nil {
			return err
		}
		if err := ip.write(); err != nil {
			return err
		}
		out.Applied = true
		out.NextActions = ip.nextActions(true)
		return nil
	}
	var err error
	if opt.Apply {
		err = e.WithLock(ctx, "import --apply", run)
	} else {
		err = run(nil)
	}
	return out, warnings, err
}

// importSpot is one place a target reads assets of one type from.
type importSpot struct {
	target, scope string
	typ           module.Type
	dir           string
	// file is the one file to read; "" lists dir: files ending in suffix,
	// or skill folders when suffix is "" too.
	file, suffix string
}

func (e *Engine) importSpots(m *manifest.Manifest) []importSpot {
	proj := e.projectRoot().String()
	codexHome := e.codexHomeFor(m)
	claudeHome := e.homePath(m.Targets["claude_code"].OptionString("claude_home", "~/.claude"))
	j := filepath.Join
	return append([]importSpot{
		{"codex", "user", module.TypeInstructions, codexHome, "AGENTS.md", ""},
		{"codex", "project", module.TypeInstructions, proj, "AGENTS.md", ""},
		{"codex", "user", module.TypeSkill, j(codexHome, "skills"), "", ""},
		{"codex", "project", module.TypeSkill, j(proj, ".agents", "skills"), "", ""},
		{"codex", "user", module.TypePrompt, j(codexHome, "prompts"), "", ".md"},
		{"claude_code", "user", module.TypeInstructions, claudeHome, "CLAUDE.md", ""},
		{"claude_code", "project", module.TypeInstructions, proj, "CLAUDE.md", ""},
		{"claude_code", "user", module.TypeSkill, j(claudeHome, "skills"), "", ""},
		{"claude_code", "project", module.TypeSkill, j(proj, ".claude", "skills"), "", ""},
		{"claude_code", "user", module.TypeCommand, j(claudeHome, "commands"), "", ".md"},
		{"claude_code", "project", module.TypeCommand, j(proj, ".claude", "commands"), "", ".md"},
		{"claude_code", "user", module.TypeAgent, j(claudeHome, "agents"), "", ".md"},
		{"claude_code", "project", module.TypeAgent, j(proj, ".claude", "agents"), "", ".md"},
		{"cursor", "project", module.TypeInstructions, j(proj, ".cursor", "rules"), "", ".mdc"},
		{"cursor", "project", module.TypeSkill, j(proj, ".cursor", "skills"), "", ""},
		{"cursor", "project", module.TypeCommand, j(proj, ".cursor", "commands"), "", ".md"},
		{"cursor", "project", module.TypeAgent, j(proj, ".cursor", "agents"), "", ".md"},
		{"vscode", "project", module.TypeInstructions, j(proj, ".github"), "copilot-instructions.md", ""},
		{"vscode", "project", module.TypeSkill, j(proj, ".github", "skills"), "", ""},
		{"vscode", "project", module.TypePrompt, j(proj, ".github", "prompts"), "", ".prompt.md"},
		{"vscode", "project", module.TypeAgent, j(proj, ".github", "agents"), "", ".agent.md"},
	}, mcpImportSpots(e.Env.Home, codexHome, proj)...)
}

// homePath expands ~ and takes a relative path from $HOME.
func (e *Engine) homePath(p string) string {
	p = e.Env.ExpandHome(strings.TrimSpace(p))
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Env.Home, p)
	}
	return filepath.Clean(p)
}

// codexHomeFor is the codex user folder: the codex_home option of m (when
// m is given), else $CODEX_HOME, else ~/.codex.
func (e *Engine) codexHomeFor(m *manifest.Manifest) string {
	codexHome := filepath.Join(e.Env.Home, ".codex")
	if h := strings.TrimSpace(e.Env.CodexHome); h != "" {
		codexHome = e.homePath(h)
	}
	if m != nil {
		if h := m.Targets["codex"].OptionString("codex_home", ""); h != "" {
			codexHome = e.homePath(h)
		}
	}
	return codexHome
}
