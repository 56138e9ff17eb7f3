package engine

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// ConfigText returns the bytes of $AGENTPACK_HOME/config.toml, or nil when
// there is none.
func (e *Engine) ConfigText(ctx context.Context) ([]byte, error) {
	return e.optionalFile(filepath.Join(e.Env.AgentpackHome, "config.toml"))
}

// LockfileText returns the bytes of the request's agentpack.lock.json, or
// nil when there is none.
func (e *Engine) LockfileText(ctx context.Context, req Request) ([]byte, error) {
	return e.optionalFile(filepath.Join(e.Env.ResolveRepo(req.Repo), lockfile.FileName))
}

// optionalFile reads path through the engine's System; a missing file is
// nil, nil.
func (e *Engine) optionalFile(path string) ([]byte, error) {
	data, err := e.Sys.ReadFile(fsys.AbsPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Wrap(err, apperr.IOFailed, "cannot read %s", path).With("path", path).With("path_posix", filepath.ToSlash(path))
	}
	return data, nil
}
