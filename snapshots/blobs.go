package snapshots

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// SaveBlob stores data in snapshots/<id>/<sha256> atomically and returns the
// hex SHA-256. Saving the same bytes twice under one id writes once; a blob
// already there with other bytes (damage) is replaced.
func (s *Store) SaveBlob(id string, data []byte) (sha256hex string, err error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	path := s.blobPath(id, sha)
	if old, err := s.sys.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return sha, nil
	}
	if err := s.writeState(path, data); err != nil {
		return "", err
	}
	return sha, nil
}

// ReadBlob returns the bytes saved under id with the given SHA-256 after
// checking their hash. Missing or damaged bytes are E_SNAPSHOT_CORRUPTED.
func (s *Store) ReadBlob(id, sha string) ([]byte, error) {
	return s.readBlob(id, sha, nil)
}

// readBlob is [Store.ReadBlob] with the pack read through packs (nil:
// each read opens the pack).
func (s *Store) readBlob(id, sha string, packs *openPacks) ([]byte, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if !isSHA256(sha) {
		return nil, blobCorrupted(id, sha, "", "snapshot %s names an invalid hash %q", id, sha)
	}
	// The pack first, where every snapshot keeps its bytes now: a
	// rollback of 9,000 files does not try 9,000 loose files that do not
	// exist (a failed open and an error made each) before their pack.
	path := s.blobDir(id).JoinName(packName)
	data, err := s.readPacked(id, sha, packs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, blobCorrupted(id, sha, path, "saved bytes %s of snapshot %s cannot be read from its pack: %v", sha, id, err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// A snapshot of an earlier version, one file per blob.
		path = s.blobPath(id, sha)
		data, err = s.sys.ReadFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, blobCorrupted(id, sha, path, "snapshot %s is missing its saved bytes %s", id, sha)
	}
	if err != nil {
		return nil, ioError(err, "cannot read saved bytes %s of snapshot %s", sha, id)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != sha {
		return nil, blobCorrupted(id, sha, path, "saved bytes %s of snapshot %s are damaged (their hash is %s)", sha, id, got)
	}
	return data, nil
}

func blobCorrupted(id, sha string, path fsys.AbsPath, format string, args ...any) *apperr.Error {
	e := apperr.New(apperr.SnapshotCorrupted, format, args...).
		WithHint("this snapshot cannot be restored exactly; pick another with `agentpack snapshots` or redeploy with `agentpack deploy --apply`").
		With("id", id).
		With("sha256", sha)
	if path != "" {
		e = e.With("path", path.String())
	}
	return e
}

// DeleteBlobs removes the blob folder of id (absent is fine). The engine uses
// it when it rolls an apply back from the journal before its record existed.
func (s *Store) DeleteBlobs(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := s.sys.RemoveAll(s.blobDir(id)); err != nil {
		return ioError(err, "cannot remove saved bytes of snapshot %s", id)
	}
	return nil
}
