package aampkg

import (
	"context"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Pack reads the package folder dir and returns its deterministic .aam
// archive and its manifest (the author's, without file_checksums).
func Pack(ctx context.Context, sys fsys.System, dir fsys.AbsPath) ([]byte, *Manifest, error) {
	return nil, nil, apperr.New(apperr.Unexpected, "pack is not implemented yet")
}
