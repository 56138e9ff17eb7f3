package engine

import (
	"context"
	"path/filepath"

	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
)

// AddData is the data of `agentpack add`.
type AddData struct {
	Module            module.Module `json:"module"`
	ManifestPath      string        `json:"manifest_path"`
	ManifestPathPosix string        `json:"manifest_path_posix"`
}

// WithEditLock checks the environment ([Env.Check]) and runs fn, an edit
// of the desired-state repo, under the state lock that every mutating
// command takes (SPEC §2), so concurrent edits serialise and each re-reads
// agentpack.yaml under it; the lock also rolls back an interrupted apply
// first (SPEC §6). It runs fn directly when this engine already holds the
// lock, and without the lock when its System only records: a dry run writes
// nothing, not even the lock file.
func (e *Engine) WithEditLock(ctx context.Context, command string, fn func(recovered []string) error) error {
	if e.locked {
		return fn(nil) // nested in an operation that holds the lock
	}
	return e.withCheckedLock(ctx, command, fn)
}

// AddModule appends mod to the request's agentpack.yaml under the state
// lock; only the new module's lines are added.
func (e *Engine) AddModule(ctx context.Context, req Request, mod module.Module) (*AddData, error) {
	var out *AddData
	err := e.WithEditLock(ctx, "add", func([]string) error {
		var err error
		out, err = e.addModule(ctx, req, mod)
		return err
	})
	return out, err
}

func (e *Engine) addModule(ctx context.Context, req Request, mod module.Module) (*AddData, error) {
	m, _, err := e.LoadManifest(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, x := range m.Modules {
		if x.ID == mod.ID {
			return nil, apperr.New(apperr.ModuleAlreadyExists, "module %q already exists", mod.ID).
				WithHint("pick another --id, or `agentpack remove %s` first", mod.ID).With("id", mod.ID)
		}
	}
	md, err := manifest.OpenDoc(e.Sys, abs(m.Path), e.Adapters.Names())
	if err != nil {
		return nil, err
	}
	data, err := md.AppendModule(m, mod)
	if err != nil {
		return nil, err
	}
	if err := md.SaveBytes(e.Sys, data); err != nil {
		return nil, err
	}
	if mod.Tags == nil {
		mod.Tags = []string{}
	}
	if mod.Targets == nil {
		mod.Targets = []string{}
	}
	return &AddData{Module: mod, ManifestPath: m.Path, ManifestPathPosix: filepath.ToSlash(m.Path)}, nil
}

// RemoveData is the data of `agentpack remove`.
type RemoveData struct {
	ID                string `json:"id"`
	ManifestPath      string `json:"manifest_path"`
	ManifestPathPosix string `json:"manifest_path_posix"`
}

// RemoveModule deletes a module's lines (with the comments right above it)
// and its mentions in profiles, under the state lock; the rest of the file
// is kept byte for byte.
func (e *Engine) RemoveModule(ctx context.Context, req Request, id string) (*RemoveData, error) {
	var out *RemoveData
	err := e.WithEditLock(ctx, "remove", func([]string) error {
		var err error
		out, err = e.removeModule(ctx, req, id)
		return err
	})
	return out, err
}

func (e *Engine) removeModule(ctx context.Context, req Request, id string) (*RemoveData, error) {
	m, _, err := e.LoadManifest(ctx, req)
	if err != nil {
		return nil, err
	}
	md, err := manifest.OpenDoc(e.Sys, abs(m.Path), e.Adapters.Names())
	if err != nil {
		return nil, err
	}
	data, err := md.RemoveModule(m, id)
	if err != nil {
		return nil, err
	}
	if err := md.SaveBytes(e.Sys, data); err != nil {
		return nil, err
	}
	return &RemoveData{ID: id, ManifestPath: m.Path, ManifestPathPosix: filepath.ToSlash(m.Path)}, nil
}
