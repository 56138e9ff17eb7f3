package fsys

import "testing"

func TestDurable(t *testing.T) {
	var hooked []AbsPath
	real := NewRealSystem(RealSystemOptions{AfterWrite: func(p AbsPath) { hooked = append(hooked, p) }})
	d, ok := Durable(real).(*RealSystem)
	if !ok || !d.opts.Fsync || real.opts.Fsync {
		t.Fatalf("Durable(RealSystem) = %#v; want a copy with Fsync, the original unchanged", Durable(real))
	}
	path := tempRoot(t).Join("deep/journal.json")
	if err := d.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(hooked) != 1 || hooked[0] != path {
		t.Fatalf("the durable copy lost the AfterWrite hook: %v", hooked)
	}
	mem := NewMemSystem()
	dry := NewDryRunSystem(real)
	ro := NewReadOnlySystem(real)
	for _, sys := range []System{mem, dry, ro} {
		if Durable(sys) != sys {
			t.Errorf("Durable(%T) should be the System itself", sys)
		}
	}
}
