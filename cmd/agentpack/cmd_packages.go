package main

import (
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine"
)

// InstallCmd is `agentpack install`.
type InstallCmd struct {
	Specs    []string `arg:"" optional:"" help:"Packages: name, name@range, name@tag, a .aam file, a package folder or <source>/<artifact> of an artifact source (none: what agentpack.yaml and the lockfile name)."`
	Tags     []string `help:"Tags for the installed packages' modules (default: the profile's first include tag)." sep:","`
	Targets  []string `help:"Targets for the installed packages' modules (default: every configured target)." sep:","`
	NoDeploy bool     `name:"no-deploy" help:"Only record the packages in agentpack.yaml and the lockfile."`
	Force    bool     `help:"Resolve and fetch again packages that are already installed."`
	Adopt    bool     `help:"Let the deploy take over existing unmanaged files (as deploy --adopt)."`
	Registry string   `help:"Resolve from this registry only."`
}

// Run implements the command.
func (c *InstallCmd) Run(a *App) error {
	return a.run("install", "install", func() (*result, error) {
		opt := engine.InstallOptions{Specs: c.Specs, Tags: c.Tags, Targets: c.Targets,
			NoDeploy: c.NoDeploy, Force: c.Force, Adopt: c.Adopt, Registry: c.Registry}
		if a.asksInTerminal() {
			// Show what would change first, from the same walk on a
			// System that only records.
			if pre, _, err := a.recordingEngine().Install(a.Ctx(), a.Request(), opt); err == nil {
				p := a.errPrinter()
				for _, i := range pre.Installed {
					p.Printf("would install %s@%s\n", i.Name, i.Version)
				}
				for _, r := range pre.DependenciesResolved {
					p.Printf("  + dependency %s@%s\n", r.Name, r.Version)
				}
				if pre.Deploy != nil {
					p.Printf("deploy: %d to create, %d to update, %d to delete\n", pre.Deploy.Summary.Create, pre.Deploy.Summary.Update, pre.Deploy.Summary.Delete)
				}
			}
		}
		if err := a.confirm("install", "Install "+orAll(c.Specs)+"?"); err != nil && !a.Globals.DryRun {
			return nil, err
		}
		d, warnings, err := a.Engine().Install(a.Ctx(), a.Request(), opt)
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: d, Warnings: warnings, previewed: true, Summary: installSummary(d), Human: func(p *Printer) {
			for _, i := range d.Installed {
				p.Printf("%s %s@%s (%d artifact(s), from %s)\n", p.green("installed"), i.Name, i.Version, i.ArtifactCount, i.Source)
			}
			for _, r := range d.DependenciesResolved {
				p.Printf("%s %s@%s\n", p.green("  + dependency"), r.Name, r.Version)
			}
			for _, r := range d.AlreadyInstalled {
				p.Printf("%s %s@%s\n", p.dim("already installed"), r.Name, r.Version)
			}
			for _, f := range d.Failed {
				p.Printf("%s %s: %s\n", p.red("failed"), f.Package, f.Message)
				if f.Hint != "" {
					p.Printf("      %s %s\n", p.dim("→"), f.Hint)
				}
			}
			if d.Deploy == nil && !c.NoDeploy {
				p.Printf("Nothing to do.\n")
				return
			}
			printPackageDeploy(p, d.Deploy)
		}}, nil
	})
}

// asksInTerminal reports whether this invocation will ask before a
// mutation (a terminal, no --yes, no --json, no --dry-run).
func (a *App) asksInTerminal() bool {
	return !a.Globals.Yes && !a.Globals.DryRun && !a.Globals.JSON && isTerminal(a.Stdin)
}

func orAll(specs []string) string {
	if len(specs) == 0 {
		return "the packages of agentpack.yaml"
	}
	return strings.Join(specs, ", ")
}

func installSummary(d *engine.InstallData) string {
	var names []string
	for _, i := range d.Installed {
		names = append(names, i.Name+"@"+i.Version)
	}
	if len(names) == 0 {
		return "install: nothing new"
	}
	return "installed " + strings.Join(names, ", ")
}

func printPackageDeploy(p *Printer, d *engine.PackageDeploy) {
	switch {
	case d == nil:
		p.Printf("Not deployed (--no-deploy): run `agentpack deploy --apply`.\n")
	case d.Reason == "dry_run":
		p.Printf("Dry run: would create %d, update %d, delete %d file(s); nothing written.\n", d.Summary.Create, d.Summary.Update, d.Summary.Delete)
	case d.Applied:
		p.Printf("Deployed: %d created, %d updated, %d deleted (snapshot %s).\n", d.Summary.Create, d.Summary.Update, d.Summary.Delete, d.SnapshotID)
	default:
		p.Printf("Nothing to deploy.\n")
	}
}

// UninstallCmd is `agentpack uninstall`.
type UninstallCmd struct {
	Name     string `arg:"" help:"The installed package."`
	NoDeploy bool   `name:"no-deploy" help:"Only update agentpack.yaml and the lockfile."`
	Force    bool   `help:"Remove it even when other installed packages depend on it."`
}

// Run implements the command.
func (c *UninstallCmd) Run(a *App) error {
	return a.run("uninstall", "uninstall", func() (*result, error) {
		opt := engine.UninstallOptions{NoDeploy: c.NoDeploy, Force: c.Force}
		if a.asksInTerminal() {
			if pre, _, err := a.recordingEngine().Uninstall(a.Ctx(), a.Request(), c.Name, opt); err == nil {
				p := a.errPrinter()
				for _, r := range pre.RemovedDependencies {
					p.Printf("would also remove %s@%s (no longer needed)\n", r.Name, r.Version)
				}
				if pre.Deploy != nil {
					p.Printf("deploy: %d file(s) to delete\n", pre.Deploy.Summary.Delete)
				}
			}
		}
		if err := a.confirm("uninstall", "Uninstall "+c.Name+"?"); err != nil && !a.Globals.DryRun {
			return nil, err
		}
		d, warnings, err := a.Engine().Uninstall(a.Ctx(), a.Request(), c.Name, opt)
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: d, Warnings: warnings, previewed: true, Summary: "uninstalled " + d.PackageName, Human: func(p *Printer) {
			p.Printf("%s %s@%s\n", p.green("uninstalled"), d.PackageName, d.Version)
			for _, r := range d.RemovedDependencies {
				p.Printf("%s %s@%s (no longer needed)\n", p.green("  - dependency"), r.Name, r.Version)
			}
			if d.DependentsWarning != "" {
				p.Printf("%s %s\n", p.yellow("note:"), d.DependentsWarning)
			}
			printPackageDeploy(p, d.Deploy)
		}}, nil
	})
}

// ListCmd is `agentpack list`.
type ListCmd struct{}

// Run implements the command.
func (c *ListCmd) Run(a *App) error {
	return a.run("list", "list", func() (*result, error) {
		d, warnings, err := a.Engine().ListPackages(a.Ctx(), a.Request())
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			if len(d.Packages) == 0 {
				p.Printf("No packages installed.\n")
				return
			}
			for _, l := range d.Packages {
				kinds := make([]string, 0, len(l.Artifacts))
				for k, n := range l.Artifacts {
					kinds = append(kinds, k+" "+itoa(n))
				}
				sort.Strings(kinds)
				how := "direct"
				if !l.Direct {
					how = "dependency of " + strings.Join(l.RequiredBy, ", ")
				}
				p.Printf("%-32s %-12s %-10s %s (%s)\n", l.Name, l.Version, l.Source, strings.Join(kinds, ", "), how)
			}
		}}, nil
	})
}

// OutdatedCmd is `agentpack outdated`.
type OutdatedCmd struct{}

// Run implements the command.
func (c *OutdatedCmd) Run(a *App) error {
	return a.run("outdated", "outdated", func() (*result, error) {
		d, warnings, err := a.Engine().Outdated(a.Ctx(), a.Request())
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			if len(d.Packages) == 0 {
				p.Printf("Every package is up to date.\n")
				return
			}
			p.Printf("%-32s %-12s %-12s %-12s %s\n", "package", "installed", "wanted", "latest", "registry")
			for _, o := range d.Packages {
				p.Printf("%-32s %-12s %-12s %-12s %s\n", o.Name, o.Installed, o.Wanted, o.Latest, o.Registry)
			}
		}}, nil
	})
}

// VerifyCmd is `agentpack verify`.
type VerifyCmd struct {
	Name     string `arg:"" optional:"" help:"The package to verify (default: all)."`
	All      bool   `help:"Verify every installed package."`
	Diff     bool   `help:"Add unified diffs of modified files against the bytes agentpack wrote."`
	ExitCode bool   `name:"exit-code" help:"Exit 2 when a package is not clean (for CI)."`
}

// Run implements the command.
func (c *VerifyCmd) Run(a *App) error {
	return a.run("verify", "verify", func() (*result, error) {
		d, clean, warnings, err := a.Engine().VerifyPackages(a.Ctx(), a.Request(), engine.VerifyOptions{Name: c.Name, All: c.All, Diff: c.Diff})
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		code := 0
		if c.ExitCode && !clean {
			code = 2
		}
		return &result{Data: d, Warnings: warnings, ExitCode: code, Human: func(p *Printer) {
			var rs []*engine.VerifyResult
			switch v := d.(type) {
			case *engine.VerifyResult:
				rs = []*engine.VerifyResult{v}
			case *engine.VerifyAllData:
				rs = v.Packages
			}
			if len(rs) == 0 {
				p.Printf("No packages installed.\n")
			}
			for _, r := range rs {
				state := p.green("clean")
				if !r.IsClean {
					state = p.red("not clean")
				}
				p.Printf("%s@%s: %s (%d ok)\n", r.PackageName, r.Version, state, len(r.OKFiles))
				for _, f := range r.ModifiedFiles {
					p.Printf("  modified:  %s\n", f)
				}
				for _, f := range r.MissingFiles {
					p.Printf("  missing:   %s\n", f)
				}
				for _, f := range r.UntrackedFiles {
					p.Printf("  untracked: %s\n", f)
				}
				for _, df := range r.Diffs {
					p.Printf("%s", df.Unified)
				}
			}
		}}, nil
	})
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
