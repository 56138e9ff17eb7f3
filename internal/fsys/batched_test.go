package fsys

import "testing"

func TestBatchedWithoutFsyncIsTheSystemItself(t *testing.T) {
	real := NewRealSystem(RealSystemOptions{})
	mem := NewMemSystem()
	for _, sys := range []System{real, mem, NewDryRunSystem(real), NewReadOnlySystem(real)} {
		b, barrier := Batched(sys)
		if b != sys {
			t.Errorf("Batched(%T) = %T; want the System itself", sys, b)
		}
		if err := barrier(); err != nil {
			t.Errorf("the barrier of %T: %v", sys, err)
		}
	}
}
