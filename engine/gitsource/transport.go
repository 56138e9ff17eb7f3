package gitsource

import (
	"context"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// go-git's own file:// transport runs the git-upload-pack binary. agentpack
// must work without git installed, so file:// URLs and plain local paths are
// served in-process instead. This replaces the "file" protocol for the whole
// process, which is what every go-git user in agentpack wants.
func init() {
	client.InstallProtocol("file", localTransport{})
}

// localTransport serves local repositories (bare or with a .git folder) with
// go-git's in-process server.
type localTransport struct{}

// NewUploadPackSession implements transport.Transport.
func (localTransport) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	st, err := loadLocal(ep)
	if err != nil {
		return nil, err
	}
	s, err := server.NewClient(fixedLoader{st}).NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	return &peelingSession{UploadPackSession: s, st: st}, nil
}

// NewReceivePackSession implements transport.Transport.
func (localTransport) NewReceivePackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.ReceivePackSession, error) {
	st, err := loadLocal(ep)
	if err != nil {
		return nil, err
	}
	return server.NewClient(fixedLoader{st}).NewReceivePackSession(ep, auth)
}

// loadLocal opens the repository at ep.Path: its .git folder, or the folder
// itself when it is bare.
func loadLocal(ep *transport.Endpoint) (storer.Storer, error) {
	dir := filepath.FromSlash(ep.Path)
	if isDir(filepath.Join(dir, ".git")) {
		dir = filepath.Join(dir, ".git")
	} else if !isDir(filepath.Join(dir, "objects")) || !isDir(filepath.Join(dir, "refs")) {
		return nil, transport.ErrRepositoryNotFound
	}
	return filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// fixedLoader hands the in-process server a storer that is already open.
type fixedLoader struct{ st storer.Storer }

// Load implements server.Loader.
func (l fixedLoader) Load(*transport.Endpoint) (storer.Storer, error) { return l.st, nil }

// peelingSession adds the peeled commits of annotated tags to the advertised
// references, as git-upload-pack does and go-git's server does not, so that
// ls-remote resolves annotated tags without a fetch.
type peelingSession struct {
	transport.UploadPackSession
	st storer.Storer
}

// AdvertisedReferences implements transport.UploadPackSession.
func (s *peelingSession) AdvertisedReferences() (*packp.AdvRefs, error) {
	return s.AdvertisedReferencesContext(context.Background())
}

// AdvertisedReferencesContext implements transport.UploadPackSession.
func (s *peelingSession) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	ar, err := s.UploadPackSession.AdvertisedReferencesContext(ctx)
	if err != nil {
		return nil, err
	}
	for name, h := range ar.References {
		if !plumbing.ReferenceName(name).IsTag() {
			continue
		}
		if peeled, ok := peel(s.st, h); ok {
			ar.Peeled[name] = peeled
		}
	}
	return ar, nil
}

// peel follows tag objects from h to the first non-tag object; ok is false
// when h is not a tag object.
func peel(st storer.EncodedObjectStorer, h plumbing.Hash) (plumbing.Hash, bool) {
	tagged := false
	for range 32 {
		tag, err := object.GetTag(st, h)
		if err != nil {
			break
		}
		h, tagged = tag.Target, true
	}
	return h, tagged
}
