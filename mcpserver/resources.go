package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
)

// The fixed resource URIs.
const (
	URIConfig   = "agentpack://config"
	URIManifest = "agentpack://manifest"
	// URIRegistries is the data of `agentpack registry list --json`.
	URIRegistries = "agentpack://registries"
	URILock       = "agentpack://lock"
	URISnapshots  = "agentpack://snapshots"
	// ModuleURITemplate is the resource template of module files.
	ModuleURITemplate = "agentpack://modules/{id}/{path}"
	modulePrefix      = "agentpack://modules/"
)

// MIME types.
const (
	mimeJSON     = "application/json"
	mimeTOML     = "application/toml"
	mimeYAML     = "application/x-yaml"
	mimeMarkdown = "text/markdown"
	mimeText     = "text/plain"
	mimeBinary   = "application/octet-stream"
)

// resourceInfo describes one readable resource.
type resourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	MIMEType    string `json:"mime_type"`
	Description string `json:"description"`
	// Size is the byte size of module files (0 for the fixed resources).
	Size int64 `json:"size,omitempty"`
}

// fixedResources are the resources that always exist (their content may be
// JSON null).
var fixedResources = []resourceInfo{
	{URI: URIConfig, Name: "config", MIMEType: mimeTOML, Description: "$AGENTPACK_HOME/config.toml as text; JSON null when the file does not exist."},
	{URI: URIManifest, Name: "manifest", MIMEType: mimeJSON, Description: "agentpack.yaml of the repo, parsed, as JSON; null when absent."},
	{URI: URILock, Name: "lock", MIMEType: mimeJSON, Description: "agentpack.lock.json of the repo; null when absent."},
	{URI: URISnapshots, Name: "snapshots", MIMEType: mimeJSON, Description: "Deploy and rollback snapshots: the data of `agentpack snapshots --json`."},
	{URI: URISources, Name: "sources", MIMEType: mimeJSON, Description: "Artifact sources: the data of `agentpack source list --json`."},
	{URI: URIPackagesInstalled, Name: "packages-installed", MIMEType: mimeJSON, Description: "Installed packages: the data of `agentpack list --json`."},
	{URI: URIRegistries, Name: "registries", MIMEType: mimeJSON, Description: "Package registries: the data of `agentpack registry list --json`."},
}

// contents is what reading a resource returns: Text, or Blob for a module
// file that is not text (then Text is empty).
type contents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

// encodingBase64 is the encoding of the resources tool's text when the
// resource is a blob.
const encodingBase64 = "base64"

// toolText is c as the resources tool's read data carries it: the text,
// or a blob in standard base64 with encoding "base64" (the envelope is
// JSON, which cannot hold raw bytes).
func (c *contents) toolText() (text, encoding string) {
	if c.Blob != nil {
		return base64.StdEncoding.EncodeToString(c.Blob), encodingBase64
	}
	return c.Text, ""
}

// jsonNull is the content of a resource whose file does not exist.
func jsonNull(uri string) *contents { return &contents{URI: uri, MIMEType: mimeJSON, Text: "null"} }

// readResource reads uri fresh from disk for req. Failures are apperr
// errors: the resources tool puts them in an envelope, resources/read turns
// them into JSON-RPC errors.
func readResource(ctx context.Context, eng *engine.Engine, req engine.Request, uri string) (*contents, error) {
	switch uri {
	case URIConfig:
		data, err := eng.ConfigText(ctx)
		if err != nil {
			return nil, err
		}
		if data == nil {
			return jsonNull(uri), nil
		}
		return &contents{URI: uri, MIMEType: mimeTOML, Text: string(data)}, nil
	case URIManifest:
		m, _, err := eng.LoadManifest(ctx, req)
		if apperr.CodeOf(err) == apperr.ConfigMissing {
			return jsonNull(uri), nil
		}
		if err != nil {
			return nil, err
		}
		return jsonContents(uri, m)
	case URILock:
		data, err := eng.LockfileText(ctx, req)
		if err != nil {
			return nil, err
		}
		if data == nil {
			return jsonNull(uri), nil
		}
		return &contents{URI: uri, MIMEType: mimeJSON, Text: string(data)}, nil
	case URIRegistries:
		d, err := eng.RegistryList(ctx)
		if err != nil {
			return nil, err
		}
		return jsonContents(uri, d)
	case URISnapshots:
		list, _, err := eng.Snapshots(ctx)
		if err != nil {
			return nil, err
		}
		return jsonContents(uri, map[string]any{"snapshots": list})
	}
	if isModuleURI(uri) {
		return readModuleURI(ctx, eng, req, uri)
	}
	if isSourceURI(uri) {
		return readSourceResource(ctx, eng, req, uri)
	}
	if isPackageURI(uri) {
		return readPackageResource(ctx, eng, req, uri)
	}
	return nil, apperr.New(apperr.InvalidArgument, "unknown resource %q", uri).
		WithHint("list resources with action=list; module files are %s", ModuleURITemplate).With("uri", uri)
}

func jsonContents(uri string, v any) (*contents, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode %s", uri)
	}
	return &contents{URI: uri, MIMEType: mimeJSON, Text: string(b)}, nil
}

// listResources returns the fixed resources and every file of every module
// of req's profile. A repo that does not load still lists the fixed
// resources; the error says why the modules are missing.
func listResources(ctx context.Context, eng *engine.Engine, req engine.Request) ([]resourceInfo, error) {
	out := append([]resourceInfo{}, fixedResources...)
	files, err := moduleFiles(ctx, eng, req)
	for _, f := range files {
		out = append(out, f.info())
	}
	return out, err
}
