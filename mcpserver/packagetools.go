package mcpserver

import (
	"context"
	"net/url"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
)

// The package tools keep the AAM contract's argument names, so agents
// written for AAM work unchanged; their envelopes are the CLI's.

var (
	pPackageName = prop{"package_name", `{"type":"string","description":"Package name."}`}

	listSchema   = objectSchema([]prop{pRepo})
	verifySchema = objectSchema([]prop{pRepo,
		pPackageName, {"verify_all", `{"type":"boolean","description":"All packages."}`}, {"diff", `{"type":"boolean","description":"Add diffs."}`}})
	installSchema = objectSchema([]prop{pRepo,
		{"packages", `{"type":"array","items":{"type":"string"},"description":"name[@range|@tag], .aam file or folder."}`},
		pTarget, {"platform", `{"type":"string","description":"Alias of target."}`},
		{"force", `{"type":"boolean","description":"Reinstall."}`}, {"no_deploy", `{"type":"boolean","description":"Do not deploy."}`}, pYes}, "packages", "yes")
	uninstallSchema = objectSchema([]prop{pRepo, pPackageName, pYes}, "package_name", "yes")
	searchSchema    = objectSchema([]prop{
		{"query", `{"type":"string","description":"Words to find."}`},
		{"limit", `{"type":"integer","minimum":1,"maximum":50,"description":"Max results."}`},
		{"package_type", `{"type":"string","enum":["skill","agent","prompt","instruction","command","mcp"],"description":"Artifact type."}`}}, "query")
	infoSchema = objectSchema([]prop{pRepo, pPackageName,
		{"version", `{"type":"string","description":"Version or dist-tag."}`}}, "package_name")
	validateSchema     = objectSchema([]prop{{"path", `{"type":"string","description":"Package folder."}`}})
	registryListSchema = objectSchema(nil)
	publishSchema      = objectSchema([]prop{
		{"path", `{"type":"string","description":"Folder or .aam file."}`},
		{"registry", `{"type":"string","description":"Registry name."}`},
		{"tag", `{"type":"string","description":"Dist-tag (default latest)."}`}, pYes}, "yes")
	registryAddSchema = objectSchema([]prop{
		{"name", `{"type":"string","description":"Registry name."}`},
		{"url", `{"type":"string","description":"Folder or oci:// URL."}`},
		{"default", `{"type":"boolean","description":"Make it the default."}`}, pYes}, "name", "url", "yes")
	createPackageSchema = objectSchema([]prop{pRepo,
		{"path", `{"type":"string","description":"Folder (default .)."}`},
		{"name", `{"type":"string","description":"Package name."}`},
		{"version", `{"type":"string","description":"Version."}`},
		{"description", `{"type":"string","description":"Description."}`},
		{"artifact_types", `{"type":"array","items":{"type":"string"},"description":"Types to keep."}`},
		{"include_all", `{"type":"boolean","description":"All detected (default)."}`},
		{"from_source", `{"type":"string","description":"source[/artifact]."}`},
		{"artifacts", `{"type":"array","items":{"type":"string"},"description":"Names to keep."}`},
		{"force", `{"type":"boolean","description":"Replace aam.yaml."}`}, pYes}, "yes")
	configGetSchema = objectSchema([]prop{{"key", `{"type":"string","description":"Setting; none: all."}`}})
	configSetSchema = objectSchema([]prop{{"key", `{"type":"string","description":"Setting."}`},
		{"value", `{"type":"string","description":"Value."}`}, pYes}, "key", "value", "yes")
)

func packageTools() []*tool {
	return []*tool{
		{name: "list", toolset: ToolsetPackages, schema: listSchema, command: "list", commandID: "list", run: runList,
			description: "List installed packages."},
		{name: "verify", toolset: ToolsetPackages, schema: verifySchema, command: "verify", commandID: "verify", run: runVerify,
			description: "Check installed packages' files against what agentpack wrote."},
		{name: "install", toolset: ToolsetPackages, openWorld: true, write: true, schema: installSchema, command: "install", commandID: "install", run: runInstall,
			description: "Install packages with their dependencies and deploy them."},
		{name: "uninstall", toolset: ToolsetPackages, write: true, schema: uninstallSchema, command: "uninstall", commandID: "uninstall", run: runUninstall,
			description: "Uninstall a package and deploy the deletions."},
		{name: "search", toolset: ToolsetPackages, openWorld: true, schema: searchSchema, command: "search", commandID: "search", run: runSearch,
			description: "Search the registries for packages."},
		{name: "info", toolset: ToolsetPackages, openWorld: true, schema: infoSchema, command: "info", commandID: "info", run: runInfo,
			description: "Show a package's versions, artifacts and dependencies."},
		{name: "validate", toolset: ToolsetPackages, schema: validateSchema, command: "validate", commandID: "validate", run: runValidate,
			description: "Check a package folder's aam.yaml and artifacts."},
		{name: "registry_list", toolset: ToolsetPackages, openWorld: true, schema: registryListSchema, command: "registry", commandID: "registry list", run: runRegistryList,
			description: "List the configured registries and whether each answers."},
		{name: "publish", toolset: ToolsetPackages, openWorld: true, write: true, schema: publishSchema, command: "publish", commandID: "publish", run: runPublish,
			description: "Publish a package folder or .aam file to a registry."},
		{name: "create_package", toolset: ToolsetPackages, openWorld: true, write: true, schema: createPackageSchema, command: "create-package", commandID: "create-package", run: runCreatePackage,
			description: "Package the artifacts of a folder or an artifact source."},
		{name: "registry_add", toolset: ToolsetPackages, write: true, schema: registryAddSchema, command: "registry", commandID: "registry add", run: runRegistryAdd,
			description: "Add a registry to config.toml."},
		{name: "config_get", toolset: ToolsetPackages, schema: configGetSchema, command: "config", commandID: "config get", run: runConfigGet,
			description: "Show a setting, or all."},
		{name: "config_set", toolset: ToolsetPackages, write: true, schema: configSetSchema, command: "config", commandID: "config set", run: runConfigSet,
			description: "Write a setting."},
	}
}

func runConfigGet(ctx context.Context, c *call) *envelope.Envelope {
	d, err := c.eng.ConfigGet(ctx, c.args.Key)
	return finish(envelope.New("config", "config get"), d, nil, err)
}

func runConfigSet(ctx context.Context, c *call) *envelope.Envelope {
	d, err := c.eng.ConfigSet(ctx, c.args.Key, c.args.Value)
	return finish(envelope.New("config", "config set"), d, nil, err)
}

func runSearch(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.Search(ctx, c.req, c.args.Query, c.args.PackageType, c.args.Limit, "")
	return finish(envelope.New("search", "search"), d, w, err)
}

func runInfo(ctx context.Context, c *call) *envelope.Envelope {
	spec := c.args.PackageName
	if c.args.Version != "" {
		spec += "@" + c.args.Version
	}
	d, w, err := c.eng.Info(ctx, c.req, spec)
	return finish(envelope.New("info", "info"), d, w, err)
}

func runValidate(ctx context.Context, c *call) *envelope.Envelope {
	d, err := c.eng.Validate(ctx, orDot(c.args.Path))
	return finish(envelope.New("validate", "validate"), d, nil, err)
}

func runRegistryList(ctx context.Context, c *call) *envelope.Envelope {
	d, err := c.eng.RegistryList(ctx)
	return finish(envelope.New("registry", "registry list"), d, nil, err)
}

func runPublish(ctx context.Context, c *call) *envelope.Envelope {
	d, err := c.eng.Publish(ctx, orDot(c.args.Path), c.args.Registry, c.args.Tag)
	return finish(envelope.New("publish", "publish"), d, nil, err)
}

func runCreatePackage(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.CreatePackage(ctx, c.req, orDot(c.args.Path), engine.CreatePackageOptions{Artifacts: c.args.Artifacts,
		Types: c.args.ArtifactTypes, Name: c.args.Name, Version: c.args.Version, Description: c.args.Description,
		Force: c.args.Force, FromSource: c.args.FromSource})
	return finish(envelope.New("create-package", "create-package"), d, w, err)
}

func runRegistryAdd(ctx context.Context, c *call) *envelope.Envelope {
	d, err := c.eng.RegistryAdd(ctx, c.args.Name, c.args.URL, c.args.Default)
	return finish(envelope.New("registry", "registry add"), d, nil, err)
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func runList(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.ListPackages(ctx, c.req)
	return finish(envelope.New("list", "list"), d, w, err)
}

func runVerify(ctx context.Context, c *call) *envelope.Envelope {
	d, _, w, err := c.eng.VerifyPackages(ctx, c.req, engine.VerifyOptions{Name: c.args.PackageName, All: c.args.VerifyAll, Diff: c.args.Diff})
	return finish(envelope.New("verify", "verify"), d, w, err)
}

func runInstall(ctx context.Context, c *call) *envelope.Envelope {
	req := c.req
	if c.args.Target == "" && c.args.Platform != "" {
		req.Target = c.args.Platform
	}
	d, w, err := c.eng.Install(ctx, req, engine.InstallOptions{Specs: c.args.Packages, Force: c.args.Force, NoDeploy: c.args.NoDeploy})
	return finish(envelope.New("install", "install"), d, w, err)
}

func runUninstall(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.Uninstall(ctx, c.req, c.args.PackageName, engine.UninstallOptions{})
	return finish(envelope.New("uninstall", "uninstall"), d, w, err)
}

// Package resources: agentpack://packages/installed (the data of `list`)
// and agentpack://packages/{name} (one installed package; a scoped name may
// be written as is or URL-escaped).
const (
	URIPackagesInstalled = "agentpack://packages/installed"
	PackageURITemplate   = "agentpack://packages/{name}"
	packagesPrefix       = "agentpack://packages/"
)

func isPackageURI(uri string) bool { return strings.HasPrefix(uri, packagesPrefix) }

// readPackageResource serves the package resources fresh from the engine.
func readPackageResource(ctx context.Context, eng *engine.Engine, req engine.Request, uri string) (*contents, error) {
	d, _, err := eng.ListPackages(ctx, req)
	if uri == URIPackagesInstalled {
		if _, ok := noRepoWarning(req, err); ok {
			d, err = &engine.ListData{Packages: []engine.ListedPackage{}}, nil
		}
		if err != nil {
			return nil, err
		}
		return jsonContents(uri, d)
	}
	if err != nil {
		return nil, err
	}
	name, uerr := url.PathUnescape(strings.TrimPrefix(uri, packagesPrefix))
	if uerr != nil || name == "" || strings.Contains(name, "..") {
		return nil, apperr.New(apperr.InvalidArgument, "bad package resource %q", uri).
			WithHint("use %s or %s", URIPackagesInstalled, PackageURITemplate).With("uri", uri)
	}
	for _, p := range d.Packages {
		if p.Name == name {
			return jsonContents(uri, p)
		}
	}
	return nil, apperr.New(apperr.PackageNotInstalled, "package %s is not installed", name).
		WithHint("read %s for the installed packages", URIPackagesInstalled).With("uri", uri).With("package", name)
}
