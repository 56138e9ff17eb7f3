// Package archtest checks the architecture rules that keep agentpack's
// packages honest: every byte goes through fsys.System, and imports point
// one way (cmd → mcpserver → engine → engine/* → internal; targets →
// engine/target, engine/module, internal).
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agentpack/agentpack/"

// goFile is one parsed non-test Go file of the repository.
type goFile struct {
	rel  string // repo-relative, '/'
	pkg  string // repo-relative folder
	file *ast.File
}

func repoFiles(t *testing.T) []goFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var out []goFile
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		full, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		out = append(out, goFile{rel: rel, pkg: filepath.ToSlash(filepath.Dir(rel)), file: full})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 50 {
		t.Fatalf("found only %d Go files; is the walk rooted at the repository?", len(out))
	}
	return out
}

// diskCalls are the os functions that touch files. Only internal/fsys (the
// real System) and cmd (process set-up) may call them.
var diskCalls = []string{"ReadFile", "WriteFile", "Remove", "RemoveAll", "Rename", "MkdirAll", "Mkdir",
	"Open", "OpenFile", "Create", "CreateTemp", "MkdirTemp", "Stat", "Lstat", "ReadDir", "Chmod", "Symlink", "Readlink", "Link", "Truncate", "DirFS"}

func TestEveryByteGoesThroughSystem(t *testing.T) {
	still := map[string]bool{}
	defer func() {
		for _, rel := range pendingDiskCalls {
			if !still[rel] {
				t.Errorf("%s no longer calls os for files: remove it from pendingDiskCalls", rel)
			}
		}
	}()
	for _, f := range repoFiles(t) {
		if strings.HasPrefix(f.pkg, "internal/fsys") || strings.HasPrefix(f.pkg, "cmd/") {
			continue
		}
		osName := importName(f.file, "os")
		if osName == "" {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == osName && slices.Contains(diskCalls, sel.Sel.Name) {
				still[f.rel] = true
				if !allowedDiskCall(f.rel) {
					t.Errorf("%s calls os.%s: read and write through fsys.System instead", f.rel, sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// importName is the name a file uses for the import path, or "".
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return filepath.Base(p)
	}
	return ""
}

func imports(f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if rest, ok := strings.CutPrefix(p, module); ok {
			out = append(out, rest)
		}
	}
	return out
}

func under(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

func TestImportsPointOneWay(t *testing.T) {
	still := map[[2]string]bool{}
	defer func() {
		for _, p := range pendingImports {
			if !still[p] {
				t.Errorf("%s no longer imports %s: remove it from pendingImports", p[0], p[1])
			}
		}
	}()
	for _, f := range repoFiles(t) {
		for _, imp := range imports(f.file) {
			var why string
			switch {
			case under(imp, "cmd"):
				why = "nothing imports cmd"
			case under(imp, "mcpserver") && !under(f.pkg, "cmd"):
				why = "only cmd imports mcpserver"
			case under(f.pkg, "internal") && !under(imp, "internal"):
				why = "internal imports only internal"
			case under(f.pkg, "targets") && !(under(imp, "engine/target") || under(imp, "engine/module") || under(imp, "internal")):
				why = "targets import only engine/target, engine/module and internal"
			case under(f.pkg, "engine") && f.pkg != "engine" && imp == "engine":
				why = "engine's sub-packages never import the engine use cases"
			case under(f.pkg, "engine") && under(imp, "targets"):
				why = "the engine never imports the adapters"
			case under(f.pkg, "snapshots") && !(under(imp, "internal") || under(imp, "snapshots")):
				why = "snapshots imports only internal"
			}
			pending := slices.Contains(pendingImports, [2]string{f.rel, imp})
			still[[2]string{f.rel, imp}] = why != "" && pending
			if why != "" && !pending {
				t.Errorf("%s imports %s: %s", f.rel, imp, why)
			}
		}
	}
}

// pendingDiskCalls are files that still call os directly while the redesign
// moves them onto fsys.System (issue 8). The list only shrinks: a file
// leaves it when its calls go, and no file joins it.
var pendingDiskCalls = []string{}

func allowedDiskCall(rel string) bool { return slices.Contains(pendingDiskCalls, rel) }

// pendingImports are imports the redesign has not yet removed (issue 8).
var pendingImports = [][2]string{}
