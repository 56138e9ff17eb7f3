package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/textdiff"
)

// FileDiff is a unified diff of one deployed file against what agentpack
// wrote.
type FileDiff struct {
	Path    string `json:"path"`
	Unified string `json:"unified"`
}

// VerifyResult is `agentpack verify <name>` for one package.
type VerifyResult struct {
	PackageName    string     `json:"package_name"`
	Version        string     `json:"version"`
	OKFiles        []string   `json:"ok_files"`
	ModifiedFiles  []string   `json:"modified_files"`
	MissingFiles   []string   `json:"missing_files"`
	UntrackedFiles []string   `json:"untracked_files"`
	HasChecksums   bool       `json:"has_checksums"`
	IsClean        bool       `json:"is_clean"`
	Diffs          []FileDiff `json:"diffs,omitempty"`
}

// VerifyAllData is `agentpack verify --all`.
type VerifyAllData struct {
	Packages []*VerifyResult `json:"packages"`
	IsClean  bool            `json:"is_clean"`
}

// VerifyOptions are the flags of `agentpack verify`.
type VerifyOptions struct {
	Name string
	All  bool
	Diff bool
}

// VerifyPackages checks, for each package, the cached archive against the
// locked hashes and every file it deploys against the bytes agentpack
// writes for it; paths are "<target>:<root-relative path>" (cache files
// "cache:<path>"). An unclean package is a result, not an error. The data
// is a *VerifyResult for one name, else a *VerifyAllData.
func (e *Engine) VerifyPackages(ctx context.Context, req Request, opt VerifyOptions) (any, bool, []string, error) {
	m, lf, err := e.installedState(ctx, req)
	if err != nil {
		return nil, false, nil, err
	}
	var pkgs []*lockfile.Package
	if opt.Name != "" && !opt.All {
		lp := lf.FindPackage(opt.Name)
		if lp == nil {
			return nil, false, nil, notInstalled(opt.Name, m)
		}
		pkgs = append(pkgs, lp)
	} else {
		for i := range lf.Packages {
			pkgs = append(pkgs, &lf.Packages[i])
		}
	}
	results := map[string]*VerifyResult{}
	for _, lp := range pkgs {
		r := &VerifyResult{PackageName: lp.Name, Version: lp.Version, OKFiles: []string{}, ModifiedFiles: []string{},
			MissingFiles: []string{}, UntrackedFiles: []string{}, HasChecksums: len(lp.Files) > 0}
		// The cache first: loading the state below repairs a damaged entry.
		if bad, present := e.PackageCache().VerifyFiles(lp); present {
			for _, b := range bad {
				r.ModifiedFiles = append(r.ModifiedFiles, "cache:"+b)
			}
		}
		results[lp.Name] = r
	}
	var warnings []string
	if len(pkgs) > 0 {
		st, err := e.Load(ctx, req)
		if err != nil {
			return nil, false, nil, err
		}
		warnings = st.Warnings
		if err := e.verifyDeployed(st, results, opt.Diff); err != nil {
			return nil, false, warnings, err
		}
	}
	clean := true
	for _, r := range results {
		sort.Strings(r.OKFiles)
		sort.Strings(r.ModifiedFiles)
		sort.Strings(r.MissingFiles)
		sort.Strings(r.UntrackedFiles)
		r.IsClean = len(r.ModifiedFiles)+len(r.MissingFiles)+len(r.UntrackedFiles) == 0
		clean = clean && r.IsClean
	}
	if opt.Name != "" && !opt.All {
		r := results[opt.Name]
		return r, r.IsClean, warnings, nil
	}
	all := &VerifyAllData{Packages: []*VerifyResult{}, IsClean: clean}
	for _, lp := range pkgs {
		all.Packages = append(all.Packages, results[lp.Name])
	}
	return all, clean, warnings, nil
}

// verifyDeployed compares the desired files of package modules with disk.
func (e *Engine) verifyDeployed(st *State, results map[string]*VerifyResult, withDiff bool) error {
	owner := map[string]string{} // module id -> package
	for _, lm := range st.Modules {
		if p := lm.Source.Package; p != nil {
			owner[lm.ID] = p.Name
		}
	}
	// What agentpack wrote: the target manifests' hashes. A desired file
	// that was never deployed is pending, not a verify finding.
	written := map[fsys.AbsPath]string{}
	for _, root := range st.Desired.Roots {
		tm := plan.ReadTargetManifest(e.Sys, nil, root.Path, root.Target, func(w string) { st.Warn("%s", w) })
		if tm == nil {
			continue
		}
		for _, mf := range tm.ManagedFiles {
			written[mf.In(root.Path)] = mf.SHA256
		}
	}
	skillDirs := map[fsys.AbsPath]string{} // skill folder -> package
	desired := map[fsys.AbsPath]bool{}
	for _, f := range st.Desired.Files {
		desired[f.Path] = true
		for _, id := range f.ModuleIDs {
			r := results[owner[id]]
			if r == nil {
				continue
			}
			want, deployed := written[f.Path]
			if !deployed {
				break
			}
			name := f.Target + ":" + e.displayPath(f.Path)
			data, err := e.Sys.ReadFile(f.Path)
			sum := sha256.Sum256(data)
			switch {
			case err != nil:
				r.MissingFiles = append(r.MissingFiles, name)
			case hex.EncodeToString(sum[:]) != want:
				r.ModifiedFiles = append(r.ModifiedFiles, name)
				if withDiff {
					if u, ok := textdiff.Unified("a/"+relTo(f.Root, f.Path), "b/"+relTo(f.Root, f.Path), f.Data, data); ok {
						r.Diffs = append(r.Diffs, FileDiff{Path: name, Unified: u})
					}
				}
			default:
				r.OKFiles = append(r.OKFiles, name)
			}
			if strings.HasPrefix(id, "skill:") && path.Base(f.Path.ToSlash()) == "SKILL.md" {
				skillDirs[f.Path.Dir()] = owner[id] + "\x00" + f.Target + "\x00" + f.Root.String()
			}
			break
		}
	}
	for dir, who := range skillDirs {
		parts := strings.SplitN(who, "\x00", 3)
		r, target := results[parts[0]], parts[1]
		err := walkFiles(e.Sys, dir, func(p fsys.AbsPath) {
			if !desired[p] {
				r.UntrackedFiles = append(r.UntrackedFiles, target+":"+e.displayPath(p))
			}
		})
		if err != nil && !isNotExist(err) {
			return err
		}
	}
	return nil
}

// displayPath names a deployed file: relative to the project, "~/..."
// under the home folder, else absolute, with '/' separators.
func (e *Engine) displayPath(p fsys.AbsPath) string {
	if proj := e.projectRoot(); proj.Contains(p) && proj != p {
		return relTo(proj, p)
	}
	if home := abs(e.Env.Home); home.Contains(p) && home != p {
		return "~/" + relTo(home, p)
	}
	return p.ToSlash()
}

func relTo(root, p fsys.AbsPath) string {
	if rel, err := root.Rel(p); err == nil {
		return string(rel)
	}
	return p.ToSlash()
}

func walkFiles(sys fsys.System, dir fsys.AbsPath, fn func(fsys.AbsPath)) error {
	entries, err := sys.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, d := range entries {
		p := dir.JoinName(d.Name())
		if d.IsDir() {
			if err := walkFiles(sys, p, fn); err != nil {
				return err
			}
			continue
		}
		fn(p)
	}
	return nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
