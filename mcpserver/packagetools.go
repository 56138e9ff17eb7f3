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
	pPackageName = str("package_name", "")

	listSchema    = objectSchema([]prop{pRepo})
	verifySchema  = objectSchema([]prop{pRepo, pPackageName, boolean("verify_all", ""), pDiff})
	installSchema = objectSchema([]prop{pRepo,
		{"packages", `{"type":"array","items":{"type":"string"},"description":"name[@range|@tag], .aam file, folder or source/artifact."}`},
		pTarget, str("platform", "Alias of target."), boolean("force", "Reinstall."), boolean("no_deploy", ""), pYes}, "packages", "yes")
	uninstallSchema = objectSchema([]prop{pRepo, pPackageName, pYes}, "package_name", "yes")
	searchSchema    = objectSchema([]prop{pRepo, str("query", ""), {"limit", `{"type":"integer","minimum":1,"maximum":50}`},
		enum("package_type", "skill", "agent", "prompt", "instruction", "command", "mcp")}, "query")
	infoSchema         = objectSchema([]prop{pRepo, pPackageName, str("version", "Version or dist-tag.")}, "package_name")
	validateSchema     = objectSchema([]prop{str("path", "")})
	registryListSchema = objectSchema(nil)
	publishSchema      = objectSchema([]prop{str("path", "Folder or .aam file."), str("registry", ""),
		str("tag", "Dist-tag; default latest."), pYes}, "yes")
	registryAddSchema = objectSchema([]prop{pName, str("url", "Folder or oci:// URL."), boolean("default", ""), pYes},
		"name", "url", "yes")
	createPackageSchema = objectSchema([]prop{pRepo, str("path", "Default ."), pName, str("version", ""), str("description", ""),
		strList("artifact_types", ""), boolean("include_all", ""), str("from_source", "source[/artifact]."),
		strList("artifacts", ""), boolean("force", "Replace aam.yaml."), pYes}, "yes")
	configGetSchema = objectSchema([]prop{str("key", "Omit for all.")})
	configSetSchema = objectSchema([]prop{str("key", ""), str("value", ""), pYes}, "key", "value", "yes")
)

func packageTools() []*tool {
	return []*tool{
		{name: "list", toolset: ToolsetPackages, schema: listSchema, command: "list", commandID: "list", run: runList,
			description: "List installed packages."},
		{name: "verify", toolset: ToolsetPackages, schema: verifySchema, command: "verify", commandID: "verify", run: runVerify,
			description: "Verify installed packages."},
		{name: "install", toolset: ToolsetPackages, openWorld: true, write: true, schema: installSchema, command: "install", commandID: "install", run: runInstall,
			description: "Install packages and their dependencies."},
		{name: "uninstall", toolset: ToolsetPackages, write: true, schema: uninstallSchema, command: "uninstall", commandID: "uninstall", run: runUninstall,
			description: "Uninstall a package."},
		{name: "search", toolset: ToolsetPackages, openWorld: true, schema: searchSchema, command: "search", commandID: "search", run: runSearch,
			description: "Search registries for packages."},
		{name: "info", toolset: ToolsetPackages, openWorld: true, schema: infoSchema, command: "info", commandID: "info", run: runInfo,
			description: "Show a package's versions and contents."},
		{name: "validate", toolset: ToolsetPackages, schema: validateSchema, command: "validate", commandID: "validate", run: runValidate,
			description: "Check a package folder."},
		{name: "registry_list", toolset: ToolsetPackages, openWorld: true, schema: registryListSchema, command: "registry", commandID: "registry list", run: runRegistryList,
			description: "List registries and whether each answers."},
		{name: "publish", toolset: ToolsetPackages, openWorld: true, write: true, schema: publishSchema, command: "publish", commandID: "publish", run: runPublish,
			description: "Publish a package to a registry."},
		{name: "create_package", toolset: ToolsetPackages, openWorld: true, write: true, schema: createPackageSchema, command: "create-package", commandID: "create-package", run: runCreatePackage,
			description: "Turn a folder or source into a package."},
		{name: "registry_add", toolset: ToolsetPackages, write: true, schema: registryAddSchema, command: "registry", commandID: "registry add", run: runRegistryAdd,
			description: "Add a registry."},
		{name: "config_get", toolset: ToolsetPackages, schema: configGetSchema, command: "config", commandID: "config get", run: runConfigGet,
			description: "Show settings."},
		{name: "config_set", toolset: ToolsetPackages, write: true, schema: configSetSchema, command: "config", commandID: "config set", run: runConfigSet,
			description: "Change a setting."},
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
