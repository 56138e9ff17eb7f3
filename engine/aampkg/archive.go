package aampkg

import (
	"context"
	"io/fs"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// File is one regular file of a package archive.
type File struct {
	// Path is the '/'-separated path inside the package.
	Path string
	Data []byte
	// Mode is 0644 or 0755.
	Mode fs.FileMode
}

// Archive is an extracted (in memory) package: its manifest and its files,
// sorted by path, aam.yaml excluded.
type Archive struct {
	Manifest *Manifest
	Files    []File
	// ManifestBytes is the archive's aam.yaml as stored.
	ManifestBytes []byte
}

// Limits bound what Pack accepts and Extract reads.
type Limits struct {
	MaxFileSize    int64 // one file, uncompressed
	MaxTotalSize   int64 // all files, uncompressed
	MaxFiles       int
	MaxArchiveSize int64 // compressed bytes
}

// DefaultLimits are the limits of SPEC §9.1: 10 MiB a file, 50 MiB in all,
// 10,000 files.
var DefaultLimits = Limits{MaxFileSize: 10 << 20, MaxTotalSize: 50 << 20, MaxFiles: 10000, MaxArchiveSize: 50 << 20}

var _ = context.Background
var _ = apperr.Unexpected
var _ fsys.System
