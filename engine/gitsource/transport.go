package gitsource

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/agentpack/agentpack/internal/fsys"
)

// go-git's own file:// transport runs the git-upload-pack binary. agentpack
// must work without git installed, so file:// URLs and plain local paths are
// served in-process instead. This replaces the "file" protocol for the whole
// process, which is what every go-git user in agentpack wants.
func init() {
	client.InstallProtocol("file", localTransport{})
}

// localTransport serves local repositories (bare or with a .git folder) with
// go-git's in-process server, reading them through the [fsys.System] that
// the context of the session's first call carries (see [withSystem]).
type localTransport struct{}

// NewUploadPackSession implements transport.Transport. go-git passes no
// context here, so the repository is opened by the session's first call.
func (localTransport) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	return &localSession{ep: ep, auth: auth}, nil
}

// NewReceivePackSession implements transport.Transport. Nothing in
// agentpack pushes, and the repository is read-only to the server.
func (localTransport) NewReceivePackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.ReceivePackSession, error) {
	st, err := loadLocal(context.Background(), ep)
	if err != nil {
		return nil, err
	}
	return server.NewClient(fixedLoader{st}).NewReceivePackSession(ep, auth)
}

// systemKey is the context key of the System local repositories are read
// through.
type systemKey struct{}

// withSystem returns ctx carrying sys, through which the file:// transport
// reads local repositories during calls made with it.
func withSystem(ctx context.Context, sys fsys.System) context.Context {
	return context.WithValue(ctx, systemKey{}, sys)
}

// systemOf returns the System ctx carries, or the real filesystem.
func systemOf(ctx context.Context) fsys.System {
	if sys, ok := ctx.Value(systemKey{}).(fsys.System); ok && sys != nil {
		return sys
	}
	return defaultSystem
}

// loadLocal opens the repository at ep.Path: its .git folder, or the folder
// itself when it is bare.
func loadLocal(ctx context.Context, ep *transport.Endpoint) (storer.Storer, error) {
	sys := systemOf(ctx)
	dir, err := fsys.NewAbsPath(filepath.FromSlash(ep.Path))
	if err != nil {
		return nil, transport.ErrRepositoryNotFound
	}
	if isDir(sys, dir.JoinName(".git")) {
		dir = dir.JoinName(".git")
	} else if !isDir(sys, dir.JoinName("objects")) || !isDir(sys, dir.JoinName("refs")) {
		return nil, transport.ErrRepositoryNotFound
	}
	return filesystem.NewStorage(newBillyFS(sys, dir), cache.NewObjectLRUDefault()), nil
}

func isDir(sys fsys.System, p fsys.AbsPath) bool {
	fi, err := sys.Stat(p)
	return err == nil && fi.IsDir()
}

// localSession is an upload-pack session on a local repository, opened on
// the first call that brings a context.
type localSession struct {
	ep   *transport.Endpoint
	auth transport.AuthMethod

	once  sync.Once
	inner *peelingSession
	err   error
}

// open opens the repository and the server session, once.
func (s *localSession) open(ctx context.Context) (*peelingSession, error) {
	s.once.Do(func() {
		st, err := loadLocal(ctx, s.ep)
		if err != nil {
			s.err = err
			return
		}
		inner, err := server.NewClient(fixedLoader{st}).NewUploadPackSession(s.ep, s.auth)
		if err != nil {
			s.err = err
			return
		}
		s.inner = &peelingSession{UploadPackSession: inner, st: st}
	})
	return s.inner, s.err
}

// AdvertisedReferences implements transport.UploadPackSession.
func (s *localSession) AdvertisedReferences() (*packp.AdvRefs, error) {
	return s.AdvertisedReferencesContext(context.Background())
}

// AdvertisedReferencesContext implements transport.UploadPackSession.
func (s *localSession) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	inner, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	return inner.AdvertisedReferencesContext(ctx)
}

// UploadPack implements transport.UploadPackSession.
func (s *localSession) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	inner, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	return inner.UploadPack(ctx, req)
}

// Close implements transport.UploadPackSession.
func (s *localSession) Close() error {
	if s.inner == nil {
		return nil
	}
	return s.inner.Close()
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
