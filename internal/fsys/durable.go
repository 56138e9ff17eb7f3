package fsys

// Durabler is implemented by a [System] that can hand out a version of
// itself whose mutations are on stable storage, with their folder entries,
// before they return. A System that decorates a RealSystem and forwards its
// mutations should implement it too, or [Durable] cannot see the disk below.
type Durabler interface {
	// Durable returns the durable version of the System.
	Durable() System
}

// Durable returns sys's durable version when sys is a [Durabler], and sys
// itself otherwise: a System that keeps nothing in a page cache
// ([MemSystem]) or writes nothing ([DryRunSystem], [ReadOnlySystem]) has
// nothing a power cut could lose. Use it for the few small writes that must
// survive a crash whatever the user chose for the rest, such as a journal.
func Durable(sys System) System {
	if d, ok := sys.(Durabler); ok {
		return d.Durable()
	}
	return sys
}

// Durable implements [Durabler]: it returns a RealSystem like s, hook
// included, with Fsync set.
func (s *RealSystem) Durable() System {
	opts := s.opts
	opts.Fsync = true
	return NewRealSystem(opts)
}
