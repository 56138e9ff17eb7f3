package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/engine/registry/local"
	"github.com/agentpack/agentpack/engine/settings"
	"github.com/agentpack/agentpack/internal/apperr"
)

// RegistryInfo is one configured registry as the registry commands report
// it.
type RegistryInfo struct {
	Name       string `json:"name"`
	URL        string `json:"url"`
	Type       string `json:"type"`
	IsDefault  bool   `json:"is_default"`
	Accessible bool   `json:"accessible"`
}

// RegistryListData is the data of `agentpack registry list`.
type RegistryListData struct {
	Registries []RegistryInfo `json:"registries"`
}

// RegistryChangeData is the data of `registry init|add|remove`.
type RegistryChangeData struct {
	Registry        RegistryInfo `json:"registry"`
	ConfigPath      string       `json:"config_path"`
	ConfigPathPosix string       `json:"config_path_posix"`
	// Created is the registry folder `registry init` created ("" otherwise).
	Created      string `json:"created,omitempty"`
	CreatedPosix string `json:"created_posix,omitempty"`
}

// RegistryList reports the configured registries and whether each answers.
func (e *Engine) RegistryList(ctx context.Context) (*RegistryListData, error) {
	s, err := settings.Load(e.Sys, abs(e.Env.AgentpackHome), os.LookupEnv)
	if err != nil {
		return nil, err
	}
	out := &RegistryListData{Registries: []RegistryInfo{}}
	for _, cfg := range s.Registries() {
		info := RegistryInfo{Name: cfg.Name, URL: cfg.URL, Type: cfg.Type, IsDefault: cfg.Default}
		if r, err := registry.Open(cfg, e.Sys); err == nil {
			info.Accessible = r.Ping(ctx) == nil
		}
		out.Registries = append(out.Registries, info)
	}
	return out, nil
}

// RegistryAdd appends a [[registries]] entry to config.toml (its other
// bytes kept); def makes it the only default.
func (e *Engine) RegistryAdd(ctx context.Context, name, url string, def bool) (*RegistryChangeData, error) {
	var out *RegistryChangeData
	err := e.withCheckedLock(ctx, "registry add", func([]string) error {
		var err error
		out, err = e.registryAdd(name, url, def)
		return err
	})
	return out, err
}

func (e *Engine) registryAdd(name, url string, def bool) (*RegistryChangeData, error) {
	cfg := registry.Config{Name: name, URL: url, Type: registry.TypeOfURL(url), Default: def}
	if cfg.Type == local.Type {
		root, err := local.Root(e.Env.Abs(strings.TrimPrefix(url, "file://")))
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(url, "file://") {
			cfg.URL = root.String()
		}
	}
	if _, err := registry.Open(cfg, e.Sys); err != nil {
		return nil, err
	}
	path := filepath.Join(e.Env.AgentpackHome, settings.FileName)
	if err := settings.AddRegistry(e.Sys, abs(path), cfg); err != nil {
		return nil, err
	}
	return &RegistryChangeData{Registry: RegistryInfo{Name: cfg.Name, URL: cfg.URL, Type: cfg.Type, IsDefault: cfg.Default},
		ConfigPath: path, ConfigPathPosix: filepath.ToSlash(path)}, nil
}

// RegistryRemove deletes the [[registries]] entry called name.
func (e *Engine) RegistryRemove(ctx context.Context, name string) (*RegistryChangeData, error) {
	var out *RegistryChangeData
	err := e.withCheckedLock(ctx, "registry remove", func([]string) error {
		path := filepath.Join(e.Env.AgentpackHome, settings.FileName)
		cfg, err := settings.RemoveRegistry(e.Sys, abs(path), name)
		if err != nil {
			return err
		}
		out = &RegistryChangeData{Registry: RegistryInfo{Name: cfg.Name, URL: cfg.URL, Type: cfg.Type, IsDefault: cfg.Default},
			ConfigPath: path, ConfigPathPosix: filepath.ToSlash(path)}
		return nil
	})
	return out, err
}

// RegistryInit creates an empty local registry in dir and adds it.
func (e *Engine) RegistryInit(ctx context.Context, dir, name string, def bool) (*RegistryChangeData, error) {
	root := e.Env.Abs(dir)
	if name == "" {
		name = filepath.Base(root)
	}
	var out *RegistryChangeData
	err := e.withCheckedLock(ctx, "registry init", func([]string) error {
		if err := local.Init(e.Sys, abs(root), name, time.Now()); err != nil {
			return err
		}
		var err error
		out, err = e.registryAdd(name, root, def)
		if out != nil {
			out.Created, out.CreatedPosix = root, filepath.ToSlash(root)
			out.Registry.Accessible = true
		}
		return err
	})
	return out, err
}

// PublishData is the data of `agentpack publish`.
type PublishData struct {
	PackageName string `json:"package_name"`
	Version     string `json:"version"`
	Registry    string `json:"registry"`
	ArchiveSize int64  `json:"archive_size"`
	Checksum    string `json:"checksum"`
	Tag         string `json:"tag"`
}

// Publish packs the folder (or takes the .aam file) at path and stores it
// in the named registry (default: the default one, else the first).
func (e *Engine) Publish(ctx context.Context, path, registryName, tag string) (*PublishData, error) {
	src := e.Env.Abs(path)
	var archive []byte
	fi, err := e.Sys.Stat(abs(src))
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		if archive, _, err = aampkg.Pack(ctx, e.Sys, abs(src)); err != nil {
			return nil, err
		}
	} else if archive, err = e.Sys.ReadFile(abs(src)); err != nil {
		return nil, err
	}
	a, err := aampkg.Extract(archive, aampkg.DefaultLimits)
	if err != nil {
		return nil, err
	}
	r, err := e.pickRegistry(registryName)
	if err != nil {
		return nil, err
	}
	if tag == "" {
		tag = "latest"
	}
	vi, err := r.Publish(ctx, archive, a.Manifest, tag)
	if err != nil {
		return nil, err
	}
	return &PublishData{PackageName: a.Manifest.Name, Version: vi.Version, Registry: r.Name(), ArchiveSize: vi.Size, Checksum: vi.Checksum, Tag: tag}, nil
}

// pickRegistry opens the registry called name, or the default one (the
// first when none is marked default).
func (e *Engine) pickRegistry(name string) (registry.Registry, error) {
	if name != "" {
		regs, err := e.openAll(name)
		if err != nil {
			return nil, err
		}
		return regs[0], nil
	}
	s, err := settings.Load(e.Sys, abs(e.Env.AgentpackHome), os.LookupEnv)
	if err != nil {
		return nil, err
	}
	regs := s.Registries()
	if len(regs) == 0 {
		return nil, errNoRegistry()
	}
	pick := regs[0]
	for _, r := range regs {
		if r.Default {
			pick = r
			break
		}
	}
	return registry.Open(pick, e.Sys)
}

func errNoRegistry() error {
	return apperr.New(apperr.RegistryNotConfigured, "no registry is configured").
		WithHint("create one with `agentpack registry init <folder>` or add one with `agentpack registry add <name> <url>`")
}

func errRegistryNotFound(name string, regs []registry.Config) error {
	var names []string
	for _, r := range regs {
		names = append(names, r.Name)
	}
	return apperr.New(apperr.RegistryNotFound, "no registry is called %q", name).
		WithHint("configured registries: %s", strings.Join(names, ", ")).With("registry", name)
}
