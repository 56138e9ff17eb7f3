package mcpserver

import (
	"bytes"
	"context"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

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
	return resourceInfo{URI: moduleURI(f.module.ID, f.file), Name: f.module.ID + "/" + f.file, MIMEType: mimeFor(f.file, f.data),
		Description: "File " + f.file + " of " + string(f.module.Type) + " module " + f.module.ID + ".", Size: f.size}
}

// mimeTypes maps a lower-case file extension to the MIME type of its
// resource. Shell scripts stay text/plain (SPEC §8: anything else is
// text/plain), which every client can show.
var mimeTypes = map[string]string{
	".md":   mimeMarkdown,
	".yaml": mimeYAML,
	".yml":  mimeYAML,
	".json": mimeJSON,
	".toml": mimeTOML,
	".xml":  "application/xml",
	".csv":  "text/csv",
	".py":   "text/x-python",
	".txt":  mimeText,
}

// binaryTypes maps the extensions of common binary files to their MIME
// type; any other binary file is application/octet-stream.
var binaryTypes = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".ico":  "image/vnd.microsoft.icon",
	".pdf":  "application/pdf",
	".zip":  "application/zip",
	".gz":   "application/gzip",
	".wasm": "application/wasm",
}

// mimeOf maps a file name to the MIME type its resource is served with.
func mimeOf(name string) string {
	if m, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return m
	}
	return mimeText
}

// mimeFor is the MIME type of a module file with content data: by
// extension for text, and for a binary file the type of its extension when
// that is a known binary type, else application/octet-stream (a .txt or
// .md that is not text is not served as one).
func mimeFor(name string, data []byte) string {
	if !isBinary(data) {
		return mimeOf(name)
	}
	if m, ok := binaryTypes[strings.ToLower(path.Ext(name))]; ok {
		return m
	}
	return mimeBinary
}

// isBinary reports whether data cannot be served as text: it is not UTF-8
// (JSON would turn each bad byte into U+FFFD) or holds a NUL byte.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

// moduleFiles loads req's profile fresh and lists every module file.
func moduleFiles(ctx context.Context, eng *engine.Engine, req engine.Request) ([]moduleFile, error) {
	st, err := eng.Load(ctx, req)
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

// readModuleURI serves one module file as the engine loaded it: the exact
// bytes a deploy would start from, as text, or as a blob when they are not
// text (see [isBinary]). The server never reads the module's
// folder itself, so nothing the engine refused (a link leaving the module,
// a path outside it) can be served.
func readModuleURI(ctx context.Context, eng *engine.Engine, req engine.Request, uri string) (*contents, error) {
	id, file, err := parseModuleURI(uri)
	if err != nil {
		return nil, err
	}
	st, err := eng.Load(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, lm := range st.Modules {
		if lm.ID != id {
			continue
		}
		for _, f := range lm.Files {
			if f.Path != file {
				continue
			}
			if len(f.Data) > maxModuleFile {
				return nil, apperr.New(apperr.InvalidArgument, "module file %q is over the %d-byte limit", file, maxModuleFile).With("uri", uri)
			}
			if isBinary(f.Data) {
				return &contents{URI: uri, MIMEType: mimeFor(file, f.Data), Blob: f.Data}, nil
			}
			return &contents{URI: uri, MIMEType: mimeOf(file), Text: string(f.Data)}, nil
		}
		return nil, apperr.New(apperr.ModuleNotFound, "module has no file %q", file).
			WithHint("list module files with resources/list").With("file", file).With("uri", uri)
	}
	return nil, apperr.New(apperr.ModuleNotFound, "no module %q in profile %s", id, st.Profile).
		WithHint("list module files with resources/list").With("uri", uri).With("module_id", id)
}
