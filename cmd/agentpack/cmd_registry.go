package main

// RegistryCmd is `agentpack registry`.
type RegistryCmd struct {
	List   RegistryListCmd   `cmd:"" default:"withargs" help:"List the configured registries and whether each can be reached."`
	Add    RegistryAddCmd    `cmd:"" help:"Add a registry (a folder, file:// URL or oci://host/namespace) to config.toml."`
	Remove RegistryRemoveCmd `cmd:"" help:"Remove a registry from config.toml."`
	Init   RegistryInitCmd   `cmd:"" help:"Create an empty local registry in a folder and add it."`
}

// RegistryListCmd is `agentpack registry list`.
type RegistryListCmd struct{}

// Run implements the command.
func (c *RegistryListCmd) Run(a *App) error {
	return a.run("registry", "registry list", func() (*result, error) {
		d, err := a.Engine().RegistryList(a.Ctx())
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) {
			if len(d.Registries) == 0 {
				p.Printf("No registries. Create one with: agentpack registry init <folder>\n")
				return
			}
			tw := newTable(p, "NAME", "TYPE", "URL", "DEFAULT", "REACHABLE")
			for _, r := range d.Registries {
				tableRow(tw, r.Name, r.Type, r.URL, yesNo(r.IsDefault), yesNo(r.Accessible))
			}
			_ = tw.Flush()
		}}, nil
	})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// RegistryAddCmd is `agentpack registry add`.
type RegistryAddCmd struct {
	Name    string `arg:"" help:"Registry name."`
	URL     string `arg:"" help:"A folder, file:// URL or oci://host[:port]/namespace."`
	Default bool   `help:"Make it the default registry for publish."`
}

// Run implements the command.
func (c *RegistryAddCmd) Run(a *App) error {
	return a.run("registry", "registry add", func() (*result, error) {
		d, err := a.Engine().RegistryAdd(a.Ctx(), c.Name, c.URL, c.Default)
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) {
			p.Printf("Added registry %s (%s, %s) to %s\n", p.bold(d.Registry.Name), d.Registry.Type, d.Registry.URL, p.Path(d.ConfigPath))
		}}, nil
	})
}

// RegistryRemoveCmd is `agentpack registry remove`.
type RegistryRemoveCmd struct {
	Name string `arg:"" help:"Registry name."`
}

// Run implements the command.
func (c *RegistryRemoveCmd) Run(a *App) error {
	return a.run("registry", "registry remove", func() (*result, error) {
		d, err := a.Engine().RegistryRemove(a.Ctx(), c.Name)
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) {
			p.Printf("Removed registry %s from %s (its packages are left where they are)\n", p.bold(d.Registry.Name), p.Path(d.ConfigPath))
		}}, nil
	})
}

// RegistryInitCmd is `agentpack registry init`.
type RegistryInitCmd struct {
	Path    string `arg:"" help:"Folder of the new registry."`
	Name    string `help:"Registry name (default: the folder's name)."`
	Default bool   `help:"Make it the default registry for publish."`
}

// Run implements the command.
func (c *RegistryInitCmd) Run(a *App) error {
	return a.run("registry", "registry init", func() (*result, error) {
		d, err := a.Engine().RegistryInit(a.Ctx(), c.Path, c.Name, c.Default)
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) {
			p.Printf("Created registry %s in %s and added it to %s\n", p.bold(d.Registry.Name), p.Path(d.Created), p.Path(d.ConfigPath))
		}}, nil
	})
}

// PublishCmd is `agentpack publish`.
type PublishCmd struct {
	Path     string `arg:"" optional:"" default:"." help:"Package folder (packed first) or .aam file."`
	Registry string `help:"Registry to publish to (default: the default registry)."`
	Tag      string `default:"latest" help:"Dist-tag to point at this version."`
}

// Run implements the command.
func (c *PublishCmd) Run(a *App) error {
	return a.run("publish", "publish", func() (*result, error) {
		d, err := a.Engine().Publish(a.Ctx(), c.Path, c.Registry, c.Tag)
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) {
			p.Printf("Published %s@%s to %s as %s (%d bytes, %s)\n", d.PackageName, d.Version, p.bold(d.Registry), d.Tag, d.ArchiveSize, d.Checksum)
		}}, nil
	})
}

// SearchCmd is `agentpack search`.
type SearchCmd struct {
	Query    string `arg:"" optional:"" help:"Words to look for in package names, keywords and descriptions."`
	Type     string `help:"Only packages holding this artifact type: skill, agent, prompt, instruction, command, mcp."`
	Limit    int    `default:"10" help:"Results to show (1–50)."`
	Registry string `help:"Search only this registry."`
}

// Run implements the command.
func (c *SearchCmd) Run(a *App) error {
	return a.run("search", "search", func() (*result, error) {
		d, w, err := a.Engine().Search(a.Ctx(), a.Request(), c.Query, c.Type, c.Limit, c.Registry)
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			if len(d.Results) == 0 {
				p.Printf("No packages match %q.", c.Query)
				if len(d.Suggestions) > 0 {
					p.Printf(" Did you mean: %s?", joinComma(d.Suggestions))
				}
				p.Printf("\n")
				return
			}
			tw := newTable(p, "NAME", "VERSION", "TYPES", "REGISTRY", "DESCRIPTION")
			for _, r := range d.Results {
				tableRow(tw, r.Name, r.Version, joinComma(r.ArtifactTypes), r.Registry, r.Description)
			}
			_ = tw.Flush()
			if d.Total > len(d.Results) {
				p.Printf("%d more; raise --limit to see them.\n", d.Total-len(d.Results))
			}
		}}, nil
	})
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// InfoCmd is `agentpack info`.
type InfoCmd struct {
	Package string `arg:"" help:"name, name@version or name@dist-tag."`
}

// Run implements the command.
func (c *InfoCmd) Run(a *App) error {
	return a.run("info", "info", func() (*result, error) {
		d, w, err := a.Engine().Info(a.Ctx(), a.Request(), c.Package)
		if err != nil {
			return &result{Warnings: w}, err
		}
		return &result{Data: d, Warnings: w, Human: func(p *Printer) {
			p.Printf("%s@%s (%s)\n  %s\n", p.bold(d.Name), d.Version, d.Registry, d.Description)
			for kind, as := range d.Artifacts {
				for _, x := range as {
					p.Printf("  %s %s: %s\n", kind, x.Name, x.Description)
				}
			}
			for dep, rng := range d.Dependencies {
				p.Printf("  depends on %s %s\n", dep, rng)
			}
			p.Printf("  versions: %s\n", joinComma(d.Versions))
			if d.Installed {
				p.Printf("  installed: %s\n", *d.InstalledVersion)
			}
		}}, nil
	})
}
