package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine"
)

// ConfigCmd is `agentpack config`.
type ConfigCmd struct {
	Get  ConfigGetCmd  `cmd:"" help:"Show one setting, or every setting merged."`
	Set  ConfigSetCmd  `cmd:"" help:"Write one setting into config.toml (its comments stay)."`
	List ConfigListCmd `cmd:"" help:"List every setting with where its value comes from."`
}

// ConfigGetCmd is `agentpack config get`.
type ConfigGetCmd struct {
	Key string `arg:"" optional:"" help:"Setting, e.g. author.name."`
}

// Run implements the command.
func (c *ConfigGetCmd) Run(a *App) error {
	return a.run("config", "config get", func() (*result, error) {
		d, err := a.Engine().ConfigGet(a.Ctx(), c.Key)
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) { p.Printf("%s\n", humanValue(d)) }}, nil
	})
}

func humanValue(d any) string {
	switch v := d.(type) {
	case engine.ConfigValue:
		return fmt.Sprintf("%s = %v (%s)", v.Key, v.Value, v.Source)
	case *engine.ConfigMerged:
		keys := make([]string, 0, len(v.Value))
		for k := range v.Value {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s = %v\n", k, v.Value[k])
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	return fmt.Sprint(d)
}

// ConfigSetCmd is `agentpack config set`.
type ConfigSetCmd struct {
	Key   string `arg:"" help:"Setting, e.g. author.name."`
	Value string `arg:"" help:"Value: text, true/false, or a,b for lists."`
}

// Run implements the command.
func (c *ConfigSetCmd) Run(a *App) error {
	return a.run("config", "config set", func() (*result, error) {
		d, err := a.Engine().ConfigSet(a.Ctx(), c.Key, c.Value)
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) { p.Printf("%s = %v\n", d.Key, d.Value) }}, nil
	})
}

// ConfigListCmd is `agentpack config list`.
type ConfigListCmd struct{}

// Run implements the command.
func (c *ConfigListCmd) Run(a *App) error {
	return a.run("config", "config list", func() (*result, error) {
		d, err := a.Engine().ConfigList(a.Ctx())
		if err != nil {
			return nil, err
		}
		return &result{Data: d, Human: func(p *Printer) {
			tw := newTable(p, "KEY", "VALUE", "SOURCE")
			for _, v := range d.Settings {
				tableRow(tw, v.Key, fmt.Sprint(v.Value), v.Source)
			}
			_ = tw.Flush()
		}}, nil
	})
}
