package fsys

import "sync"

// Batcher is implemented by a [System] that can make many mutations
// durable at once instead of one by one. A System that decorates a
// RealSystem and forwards its mutations should implement it too, or
// [Batched] cannot see the disk below.
type Batcher interface {
	// Batched returns a version of the System whose mutations are not made
	// durable as they happen, and a barrier that makes every mutation made
	// through it durable before it returns.
	Batched() (sys System, barrier func() error)
}

// Batched returns sys's batched version and its barrier when sys is a
// [Batcher], else sys itself and a barrier that does nothing (its
// mutations are as durable as they will be when they return). A
// transaction writes its files through the batched System and calls the
// barrier before it records that they were written.
func Batched(sys System) (System, func() error) {
	if b, ok := sys.(Batcher); ok {
		return b.Batched()
	}
	return sys, func() error { return nil }
}

// Batched implements [Batcher]. Without Fsync there is nothing to make
// durable. With Fsync, where the platform can flush a whole filesystem in
// one call (syncfs(2) on Linux), the copy skips the fsync of every file and
// folder and its barrier flushes each filesystem it wrote to once;
// elsewhere it is s itself, which fsyncs each file and folder.
func (s *RealSystem) Batched() (System, func() error) {
	if !s.opts.Fsync || !haveSyncfs {
		return s, func() error { return nil }
	}
	opts := s.opts
	opts.Fsync = false
	b := &RealSystem{opts: opts, dirty: &dirtyDirs{set: map[AbsPath]bool{}}}
	return b, func() error { return syncFilesystems(b.dirty.take()) }
}

// dirtyDirs are the folders a batched [RealSystem] changed since its last
// barrier.
type dirtyDirs struct {
	mu  sync.Mutex
	set map[AbsPath]bool
}

func (d *dirtyDirs) add(dir AbsPath) {
	d.mu.Lock()
	d.set[dir] = true
	d.mu.Unlock()
}

func (d *dirtyDirs) take() []AbsPath {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]AbsPath, 0, len(d.set))
	for dir := range d.set {
		out = append(out, dir)
	}
	d.set = map[AbsPath]bool{}
	return out
}
