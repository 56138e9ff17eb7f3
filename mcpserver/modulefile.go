package mcpserver

import (
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
)

// maxModuleFile caps the size of a module file served as a resource.
const maxModuleFile = 8 << 20

// moduleFile is one file of a loaded module, addressed as
// agentpack://modules/<id>/<file>.
type moduleFile struct {
	module *module.LoadedModule
	// file is the path inside the module, '/'-separated.
	file string
	size int64
	data []byte
}

// moduleURI is the resource URI of a module file. Each part is escaped as a
// path segment, so a ':' in the id stays readable and a '/' in the file
// separates segments.
func moduleURI(id, file string) string {
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return modulePrefix + url.PathEscape(id) + "/" + strings.Join(segs, "/")
}

func (f moduleFile) info() resourceInfo {
	return resourceInfo{URI: moduleURI(f.module.ID, f.file), Name: f.module.ID + "/" + f.file, MIMEType: mimeOf(f.file),
		Description: "File " + f.file + " of " + string(f.module.Type) + " module " + f.module.ID + ".", Size: f.size}
}

// mimeOf maps a file name to the MIME type its resource is served with.
func mimeOf(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".md":
		return mimeMarkdown
	case ".yaml", ".yml":
		return mimeYAML
	case ".json":
		return mimeJSON
	case ".toml":
		return mimeTOML
	}
	return mimeText
}

// moduleFiles loads req's profile fresh and lists every module file.
func moduleFiles(eng *engine.Engine, req engine.Request) ([]moduleFile, error) {
	st, err := eng.Load(req)
	if err != nil {
		return nil, err
	}
	var out []moduleFile
	for _, lm := range st.Modules {
		for _, f := range lm.Files {
			out = append(out, moduleFile{module: lm, file: f.Path, size: int64(len(f.Data)), data: f.Data})
		}
	}
	return out, nil
}

func isModuleURI(uri string) bool { return strings.HasPrefix(uri, modulePrefix) }

// parseModuleURI splits agentpack://modules/<id>/<file> into the module id
// and a clean relative file path. Percent-escapes are decoded first (so
// both the RFC 6570 expansion with %3A and %2F and the readable form work),
// then any path that is absolute or has a ".." element is refused.
func parseModuleURI(uri string) (id, file string, err error) {
	rest := strings.TrimPrefix(uri, modulePrefix)
	if strings.ContainsAny(rest, "?#") {
		return "", "", badModulePath(uri, "query and fragment are not allowed")
	}
	rawID, rawFile, ok := strings.Cut(rest, "/")
	if !ok || rawID == "" || rawFile == "" {
		return "", "", apperr.New(apperr.InvalidArgument, "resource URI %q has no module id or file", uri).
			WithHint("use %s", ModuleURITemplate).With("uri", uri)
	}
	if id, err = url.PathUnescape(rawID); err != nil {
		return "", "", badModulePath(uri, "bad escape in the module id")
	}
	if file, err = url.PathUnescape(rawFile); err != nil {
		return "", "", badModulePath(uri, "bad escape in the file path")
	}
	if strings.ContainsAny(file, "\\\x00") || strings.HasPrefix(file, "/") {
		return "", "", badModulePath(uri, "the file path must be relative and '/'-separated")
	}
	for _, el := range strings.Split(file, "/") {
		if el == ".." || el == "." || el == "" || el == ".git" {
			return "", "", badModulePath(uri, "path traversal is not allowed")
		}
	}
	return id, file, nil
}

func badModulePath(uri, why string) error {
	return apperr.New(apperr.IOInvalidPath, "refusing resource %q: %s", uri, why).
		WithHint("use a URI from resources/list").With("uri", uri).With("reason_code", "path_traversal")
}

// readModuleURI reads one module file fresh from its source folder.
func readModuleURI(eng *engine.Engine, req engine.Request, uri string) (*contents, error) {
	id, file, err := parseModuleURI(uri)
	if err != nil {
		return nil, err
	}
	st, err := eng.Load(req)
	if err != nil {
		return nil, err
	}
	for _, lm := range st.Modules {
		if lm.ID != id {
			continue
		}
		data, err := readModuleFile(lm.SourcePath, file)
		if err != nil {
			if ae, ok := err.(*apperr.Error); ok {
				ae.With("uri", uri)
			}
			return nil, err
		}
		return &contents{URI: uri, MIMEType: mimeOf(file), Text: string(data)}, nil
	}
	return nil, apperr.New(apperr.ModuleNotFound, "no module %q in profile %s", id, st.Profile).
		WithHint("list module files with resources/list").With("uri", uri).With("module_id", id)
}

// readModuleFile reads file below a module's source folder through
// [os.Root], so neither "..", nor a symlink, nor anything else can leave
// the module's folder. A single-file module serves only that file, read
// where the manifest names it, as the engine loaded and deploys it (a
// symlink there is followed: the engine accepted it).
func readModuleFile(source, file string) ([]byte, error) {
	notFound := apperr.New(apperr.ModuleNotFound, "module has no file %q", file).
		WithHint("list module files with resources/list").With("file", file)
	if fi, err := os.Stat(source); err == nil && !fi.IsDir() {
		if file != filepath.Base(source) {
			return nil, notFound
		}
		f, err := os.Open(source)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, notFound
			}
			return nil, apperr.Wrap(err, apperr.IOFailed, "cannot open module file %q", file)
		}
		defer f.Close()
		return readRegular(f, file, notFound)
	}
	root, err := os.OpenRoot(source)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notFound
		}
		return nil, apperr.Wrap(err, apperr.IOFailed, "cannot open module folder %s", source)
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(file))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notFound
		}
		return nil, apperr.Wrap(err, apperr.IOInvalidPath, "refusing module file %q", file).
			WithHint("module files must stay inside the module folder").With("file", file).With("reason_code", "path_traversal")
	}
	defer f.Close()
	return readRegular(f, file, notFound)
}

// readRegular reads an open module file, which must be a regular file of at
// most maxModuleFile bytes.
func readRegular(f *os.File, file string, notFound error) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, notFound
	}
	data, err := io.ReadAll(io.LimitReader(f, maxModuleFile+1))
	if err != nil {
		return nil, apperr.Wrap(err, apperr.IOFailed, "cannot read module file %q", file)
	}
	if len(data) > maxModuleFile {
		return nil, apperr.New(apperr.InvalidArgument, "module file %q is over the %d-byte limit", file, maxModuleFile)
	}
	return data, nil
}
