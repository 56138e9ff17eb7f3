package main

import (
	"strings"

	"github.com/agentpack/agentpack/engine"
)

// ValidateCmd is `agentpack validate`.
type ValidateCmd struct {
	Dir      string `arg:"" optional:"" default:"." help:"Package folder (holding aam.yaml)."`
	ExitCode bool   `name:"exit-code" help:"Exit 2 when the package is not valid."`
}

// Run implements the command.
func (c *ValidateCmd) Run(a *App) error {
	return a.run("validate", "validate", func() (*result, error) {
		d, err := a.Engine().Validate(a.Ctx(), c.Dir)
		if err != nil {
			return nil, err
		}
		code := 0
		if c.ExitCode && !d.Valid {
			code = 2
		}
		summary := "valid"
		if !d.Valid {
			summary = "not valid"
		}
		return &result{Data: d, ExitCode: code, Summary: d.PackageName + "@" + d.PackageVersion + ": " + summary, Human: func(p *Printer) {
			if d.Valid {
				p.Printf("%s %s@%s: %d artifact(s)\n", p.green("valid"), d.PackageName, d.PackageVersion, d.ArtifactCount)
				return
			}
			p.Printf("%s %s@%s: %d problem(s)\n", p.red("not valid"), d.PackageName, d.PackageVersion, len(d.Errors))
			for _, e := range d.Errors {
				p.Printf("  %s\n", e)
			}
		}}, nil
	})
}

// PackCmd is `agentpack pack`.
type PackCmd struct {
	Dir string `arg:"" optional:"" default:"." help:"Package folder (holding aam.yaml)."`
	Out string `help:"Archive to write (default: <name>-<version>.aam in the working folder)."`
}

// Run implements the command.
func (c *PackCmd) Run(a *App) error {
	return a.run("pack", "pack", func() (*result, error) {
		d, err := a.Engine().Pack(a.Ctx(), c.Dir, c.Out)
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) {
			p.Printf("Packed %s@%s into %s (%d bytes, %s)\n", d.PackageName, d.Version, p.Path(d.Path), d.Size, d.Checksum)
		}}, nil
	})
}

// CreatePackageCmd is `agentpack create-package`.
type CreatePackageCmd struct {
	Dir         string   `arg:"" optional:"" default:"." help:"Folder holding the artifacts (the package is created there)."`
	Artifacts   []string `help:"Only these detected artifacts (default: all)." sep:","`
	All         bool     `help:"Include every detected artifact (the default)."`
	Type        string   `help:"Only artifacts of this type: skill, agent, prompt, instructions, command."`
	Name        string   `help:"Package name (default: the folder's name)."`
	Version     string   `name:"pkg-version" help:"Package version (default 0.1.0); --version is agentpack's own."`
	Description string   `help:"Package description."`
	Force       bool     `help:"Replace an existing aam.yaml."`
	FromSource  string   `name:"from-source" placeholder:"SOURCE[/ARTIFACT]" help:"Package artifacts of a registered artifact source (all, or the one named), recording their provenance."`
}

// Run implements the command.
func (c *CreatePackageCmd) Run(a *App) error {
	return a.run("create-package", "create-package", func() (*result, error) {
		d, warnings, err := a.Engine().CreatePackage(a.Ctx(), a.Request(), c.Dir, engine.CreatePackageOptions{Artifacts: c.Artifacts, Types: nonEmpty(c.Type),
			Name: c.Name, Version: c.Version, Description: c.Description, Force: c.Force, FromSource: c.FromSource})
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			p.Printf("Created %s for %s@%s with %d artifact(s): %s\n", p.Path(d.ManifestPath), d.PackageName, d.Version,
				len(d.ArtifactsIncluded), strings.Join(d.ArtifactsIncluded, ", "))
		}}, nil
	})
}

// nonEmpty is []string{s}, or nil for "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
