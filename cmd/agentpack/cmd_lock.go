package main

import (
	"context"

	"github.com/agentpack/agentpack/engine"
)

// LockCmd is `agentpack lock`.
type LockCmd struct{}

// Run implements the command.
func (c *LockCmd) Run(a *App) error {
	return a.lockRun("lock", (*engine.Engine).Lock)
}

// FetchCmd is `agentpack fetch`.
type FetchCmd struct{}

// Run implements the command.
func (c *FetchCmd) Run(a *App) error {
	return a.lockRun("fetch", (*engine.Engine).Fetch)
}

// UpdateCmd is `agentpack update`.
type UpdateCmd struct{}

// Run implements the command.
func (c *UpdateCmd) Run(a *App) error {
	return a.lockRun("update", (*engine.Engine).Update)
}

func (a *App) lockRun(id string, op func(*engine.Engine, context.Context, engine.Request) (*engine.LockData, []string, error)) error {
	return a.run(id, id, func() (*result, error) {
		if err := a.requireYesInJSON(id); err != nil {
			return nil, err
		}
		d, warnings, err := op(a.Engine(), a.Ctx(), a.Request())
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			for _, m := range d.Modules {
				v := engine.ShortHash(m.ResolvedVersion)
				if m.PreviousVersion != "" {
					v = engine.ShortHash(m.PreviousVersion) + " → " + p.bold(v)
				}
				p.Printf("  %-40s %s\n", m.ID, v)
			}
			p.Printf("%s: %d module(s) in %s", id, len(d.Modules), p.Path(d.Lockfile))
			if id != "lock" {
				p.Printf(", %d checkout(s) verified", d.Fetched)
			}
			p.Printf("\n")
		}}, nil
	})
}
