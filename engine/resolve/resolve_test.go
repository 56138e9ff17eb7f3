package resolve

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/agentpack/agentpack/internal/apperr"
)

// memSource is a Source over literal metadata: registry -> package -> versions.
type memSource struct {
	regs  []string
	pkgs  map[string]map[string][]Version
	tags  map[string]map[string]string
	calls int
}

func (m *memSource) Lookup(_ context.Context, name string) ([]Package, error) {
	m.calls++
	var out []Package
	for _, r := range m.regs {
		if vs, ok := m.pkgs[r][name]; ok {
			out = append(out, Package{Name: name, Registry: r, Versions: vs, DistTags: m.tags[name]})
		}
	}
	if len(out) == 0 {
		return nil, apperr.New(apperr.PackageNotFound, "package %s not found", name)
	}
	return out, nil
}

func v(ver string, deps ...string) Version {
	d := map[string]string{}
	for i := 0; i+1 < len(deps); i += 2 {
		d[deps[i]] = deps[i+1]
	}
	return Version{Version: ver, Dependencies: d}
}

func oneReg(pkgs map[string][]Version) *memSource {
	return &memSource{regs: []string{"local"}, pkgs: map[string]map[string][]Version{"local": pkgs}}
}

func specs(ss ...string) []Spec {
	var out []Spec
	for _, s := range ss {
		sp, err := ParseSpec(s)
		if err != nil {
			panic(err)
		}
		out = append(out, sp)
	}
	return out
}

func TestResolvePicksHighestAndSkipsPrereleases(t *testing.T) {
	src := oneReg(map[string][]Version{
		"@a/kit":  {v("1.0.0", "@a/base", "^1.0.0"), v("1.2.0", "@a/base", "^1.1.0"), v("2.0.0-beta.1")},
		"@a/base": {v("1.0.0"), v("1.1.0"), v("1.3.0"), v("1.4.0-rc.1"), v("2.0.0")},
	})
	got, err := Resolve(context.Background(), src, specs("@a/kit"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := Describe(got); d != "@a/base@1.3.0\n@a/kit@1.2.0\n" {
		t.Fatalf("resolution:\n%s", d)
	}
	if !got[1].Direct || got[0].Direct || strings.Join(got[0].RequiredBy, ",") != "@a/kit" {
		t.Fatalf("direct/required_by wrong: %+v", got)
	}
	if got[1].Dependencies["@a/base"] != "1.3.0" {
		t.Fatalf("dependencies not pinned: %+v", got[1])
	}
}

func TestResolveBacktracksAcrossTransitiveDependencies(t *testing.T) {
	// x@2 needs base ^2, but y needs base ^1: the solver must step x back to 1.x.
	src := oneReg(map[string][]Version{
		"x":    {v("1.0.0", "base", "^1.0.0"), v("2.0.0", "base", "^2.0.0")},
		"y":    {v("1.0.0", "base", "~1.2.0")},
		"base": {v("1.2.5"), v("1.3.0"), v("2.0.0")},
	})
	got, err := Resolve(context.Background(), src, specs("x", "y"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := Describe(got); d != "base@1.2.5\nx@1.0.0\ny@1.0.0\n" {
		t.Fatalf("resolution:\n%s", d)
	}
}

func TestResolveConflictShowsBothChains(t *testing.T) {
	src := oneReg(map[string][]Version{
		"@a/x":    {v("1.0.0", "@a/base", "^1.0.0")},
		"@a/y":    {v("2.0.0", "@a/base", "^2.0.0")},
		"@a/base": {v("1.0.0"), v("2.0.0")},
	})
	_, err := Resolve(context.Background(), src, specs("@a/x", "@a/y"), Options{})
	e := apperr.As(err)
	if e.Code != apperr.DependencyConflict {
		t.Fatalf("code %s: %v", e.Code, err)
	}
	chains, _ := e.Details["chains"].([]string)
	want := []string{"app → @a/x@1.0.0 → @a/base ^1.0.0", "app → @a/y@2.0.0 → @a/base ^2.0.0"}
	if len(chains) != 2 || chains[0] != want[0] || chains[1] != want[1] {
		t.Fatalf("chains %q, want %q", chains, want)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			t.Fatalf("message %q lacks %q", e.Message, w)
		}
	}
}

func TestResolveCyclesAndTagsAndRegistryOrder(t *testing.T) {
	src := &memSource{regs: []string{"team", "public"}, pkgs: map[string]map[string][]Version{
		"team":   {"a": {v("1.0.0", "b", "^1.0.0")}},
		"public": {"a": {v("9.0.0")}, "b": {v("1.0.0", "a", "1.x"), v("1.1.0", "a", "1.x")}},
	}, tags: map[string]map[string]string{"b": {"latest": "1.0.0", "next": "1.1.0"}}}
	got, err := Resolve(context.Background(), src, specs("a@>=1", "b@next"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := Describe(got); d != "a@1.0.0\nb@1.1.0\n" {
		t.Fatalf("resolution:\n%s", d)
	}
	if got[0].Registry != "team" {
		t.Fatalf("registry order ignored: %+v", got[0])
	}
	got, err = Resolve(context.Background(), src, specs("b"), Options{})
	if err != nil || Describe(got) != "a@1.0.0\nb@1.0.0\n" {
		t.Fatalf("empty constraint must follow the latest tag: %v\n%s", err, Describe(got))
	}
}

func TestResolvePrefersLockedVersion(t *testing.T) {
	src := oneReg(map[string][]Version{"a": {v("1.0.0"), v("1.1.0")}})
	got, err := Resolve(context.Background(), src, specs("a@^1"), Options{Prefer: map[string]string{"a": "1.0.0"}})
	if err != nil || got[0].Version != "1.0.0" {
		t.Fatalf("%v %+v", err, got)
	}
}

func TestResolveMissingPackageAndNoMatch(t *testing.T) {
	src := oneReg(map[string][]Version{"a": {v("1.0.0", "ghost", "^1")}, "b": {v("1.0.0")}})
	_, err := Resolve(context.Background(), src, specs("a"), Options{})
	if apperr.CodeOf(err) != apperr.PackageNotFound {
		t.Fatalf("missing dependency: %v", err)
	}
	_, err = Resolve(context.Background(), src, specs("b@^2"), Options{})
	if e := apperr.As(err); e.Code != apperr.PackageNotFound || !strings.Contains(e.Hint, "1.0.0") {
		t.Fatalf("no matching version: %v (%s)", err, e.Hint)
	}
}

func TestConstraintNpmRules(t *testing.T) {
	cases := []struct {
		con, ver string
		want     bool
	}{
		{"^1.2.0", "1.9.9", true}, {"^1.2.0", "2.0.0", false}, {"^0.2.3", "0.3.0", false},
		{"~1.2.0", "1.2.9", true}, {"~1.2.0", "1.3.0", false}, {"1.x", "1.7.0", true},
		{">=1.0.0 <2.0.0", "1.5.0", true}, {">=1.0.0 <2.0.0", "2.0.0", false},
		{"1.0.0 - 1.4.0", "1.4.0", true}, {"1.x || 3.x", "3.1.0", true}, {"*", "4.0.0", true},
		{"^1.0.0", "1.1.0-beta.1", false}, {"^1.1.0-beta.1", "1.1.0-beta.2", true},
		{"^1.1.0-beta.1", "1.2.0-beta.1", false}, {"^1.1.0-beta.1", "1.2.0", true},
		{"1.2.3", "1.2.3", true}, {"1.2.3", "1.2.4", false},
	}
	for _, c := range cases {
		con, err := ParseConstraint(c.con)
		if err != nil {
			t.Fatalf("%s: %v", c.con, err)
		}
		if got := con.Match(semver.MustParse(c.ver), nil); got != c.want {
			t.Errorf("%q matches %s = %v, want %v", c.con, c.ver, got, c.want)
		}
	}
}

func TestParseSpec(t *testing.T) {
	for in, want := range map[string]Spec{
		"kit": {Name: "kit"}, "kit@^1.2": {Name: "kit", Constraint: "^1.2"},
		"@acme/kit": {Name: "@acme/kit"}, "@acme/kit@next": {Name: "@acme/kit", Constraint: "next"},
		"@acme/kit@>=1.0.0 <2": {Name: "@acme/kit", Constraint: ">=1.0.0 <2"},
	} {
		got, err := ParseSpec(in)
		if err != nil || got != want {
			t.Errorf("ParseSpec(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "Kit", "@acme", "kit@", "kit@>>1", "../x", "@/x"} {
		if _, err := ParseSpec(bad); apperr.CodeOf(err) != apperr.InvalidArgument {
			t.Errorf("ParseSpec(%q) err = %v", bad, err)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"kit", "@acme/kit@^1.2.0", "kit@~1.2", "kit@1.x || >=3.0.0-rc.1", "kit@latest",
		"kit@1.0.0 - 2.0.0", "@a/b@", "kit@>=1 <2", "@@", "kit@v1.2.3-beta.1+build"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			if apperr.CodeOf(err) != apperr.InvalidArgument {
				t.Fatalf("%q: error without E_INVALID_ARGUMENT: %v", s, err)
			}
			return
		}
		if !ValidName(sp.Name) {
			t.Fatalf("%q: accepted invalid name %q", s, sp.Name)
		}
		con, err := ParseConstraint(sp.Constraint)
		if err != nil {
			t.Fatalf("%q: constraint accepted by ParseSpec but not ParseConstraint: %v", s, err)
		}
		con.Match(semver.MustParse("1.2.3-beta.1"), map[string]string{"latest": "1.0.0"})
		again, err := ParseSpec(sp.String())
		if err != nil || again != sp {
			t.Fatalf("%q: round trip %q -> %+v, %v", s, sp.String(), again, err)
		}
	})
}

// BenchmarkResolve500x5 resolves 500 packages with 5 versions each, every
// package depending on two shared others.
func BenchmarkResolve500x5(b *testing.B) {
	pkgs := map[string][]Version{}
	var roots []Spec
	for i := 0; i < 500; i++ {
		name := fmt.Sprintf("pkg-%03d", i)
		for j := 0; j < 5; j++ {
			pkgs[name] = append(pkgs[name], v(fmt.Sprintf("1.%d.0", j),
				fmt.Sprintf("pkg-%03d", (i*7+1)%500), "^1.0.0",
				fmt.Sprintf("pkg-%03d", (i*13+3)%500), fmt.Sprintf(">=1.%d.0", j%3)))
		}
		roots = append(roots, Spec{Name: name, Constraint: "^1.0.0"})
	}
	src := oneReg(pkgs)
	b.ResetTimer()
	for b.Loop() {
		got, err := Resolve(context.Background(), src, roots, Options{})
		if err != nil || len(got) != 500 {
			b.Fatalf("%v %d", err, len(got))
		}
	}
}
