package resolve

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/agentpack/agentpack/internal/apperr"
)

// Version is one published version of a package as the resolver sees it.
type Version struct {
	Version      string
	Dependencies map[string]string // name -> constraint
}

// Package is what one registry knows about one package.
type Package struct {
	Name     string
	Registry string
	DistTags map[string]string
	Versions []Version
}

// Source answers metadata questions for the resolver.
type Source interface {
	// Lookup returns the package as every registry that holds it sees it,
	// in the order the registries are configured. A package no registry
	// holds is E_PACKAGE_NOT_FOUND.
	Lookup(ctx context.Context, name string) ([]Package, error)
}

// Options tune a resolution.
type Options struct {
	// Root names the requester in conflict chains ("app" by default).
	Root string
	// Prefer maps a name to the version tried first when it still matches
	// (the locked version, so an install keeps what is already there).
	Prefer map[string]string
	// MaxSteps bounds the search; past it the first conflict is reported.
	MaxSteps int
}

// Resolved is one package of the solution.
type Resolved struct {
	Name         string
	Version      string
	Registry     string
	Dependencies map[string]string // name -> resolved version
	RequiredBy   []string          // names of resolved packages that depend on it
	Direct       bool              // requested by the root
}

// Conflict is one unsatisfiable pair of requirements.
type Conflict struct {
	Package string
	Chains  [2]string
}

type requirement struct {
	name  string
	con   *Constraint
	chain []string // requesters: "app", "@a/x@1.0.0"
}

func (r requirement) String() string {
	c := r.con.String()
	if c == "" {
		c = "latest"
	}
	return strings.Join(append(append([]string{}, r.chain...), r.name+" "+c), " → ")
}

type candidate struct {
	v    *semver.Version
	raw  string
	reg  string
	tags map[string]string
	deps map[string]string
}

type solver struct {
	ctx      context.Context
	src      Source
	opt      Options
	cands    map[string][]candidate
	assigned map[string]*candidate
	reqs     map[string][]requirement
	order    []string
	steps    int
	conflict *apperr.Error
	stack    []undo
}

// Resolve picks one version of every package the roots need. Registries
// are tried in their configured order and, within one, the highest matching
// version first; a choice that makes a later requirement unsatisfiable is
// undone and the next candidate tried. When nothing works the error is
// E_DEPENDENCY_CONFLICT with both chains in details.chains.
func Resolve(ctx context.Context, src Source, roots []Spec, opt Options) ([]Resolved, error) {
	if opt.Root == "" {
		opt.Root = "app"
	}
	if opt.MaxSteps <= 0 {
		opt.MaxSteps = 200000
	}
	s := &solver{ctx: ctx, src: src, opt: opt, cands: map[string][]candidate{},
		assigned: map[string]*candidate{}, reqs: map[string][]requirement{}}
	direct := map[string]bool{}
	for _, r := range roots {
		con, err := ParseConstraint(r.Constraint)
		if err != nil {
			return nil, err
		}
		direct[r.Name] = true
		s.add(requirement{name: r.Name, con: con, chain: []string{opt.Root}})
	}
	ok, err := s.solve()
	if err != nil {
		return nil, err
	}
	if !ok {
		if s.conflict != nil {
			return nil, s.conflict
		}
		return nil, apperr.New(apperr.DependencyConflict, "no set of versions satisfies every dependency")
	}
	return s.result(direct), nil
}

func (s *solver) add(r requirement) {
	if _, seen := s.reqs[r.name]; !seen {
		s.order = append(s.order, r.name)
	}
	s.reqs[r.name] = append(s.reqs[r.name], r)
}

// candidates loads and sorts the versions of name once.
func (s *solver) candidates(name string) ([]candidate, error) {
	if c, ok := s.cands[name]; ok {
		return c, nil
	}
	pkgs, err := s.src.Lookup(s.ctx, name)
	if err != nil {
		return nil, err
	}
	var out []candidate
	for _, p := range pkgs {
		var vs []candidate
		for _, v := range p.Versions {
			sv, err := semver.NewVersion(v.Version)
			if err != nil {
				continue // not semver: never installable
			}
			vs = append(vs, candidate{v: sv, raw: v.Version, reg: p.Registry, tags: p.DistTags, deps: v.Dependencies})
		}
		sort.SliceStable(vs, func(i, j int) bool { return vs[i].v.GreaterThan(vs[j].v) })
		out = append(out, vs...)
	}
	if pv, ok := s.opt.Prefer[name]; ok {
		for i, c := range out {
			if c.raw == pv {
				out = append([]candidate{c}, append(append([]candidate{}, out[:i]...), out[i+1:]...)...)
				break
			}
		}
	}
	s.cands[name] = out
	return out, nil
}

func (s *solver) fits(c *candidate, reqs []requirement) bool {
	for _, r := range reqs {
		if !r.con.Match(c.v, c.tags) {
			return false
		}
	}
	return true
}

// solve assigns the first unassigned name and recurses; false means no
// assignment of the remaining names works with the current choices.
func (s *solver) solve() (bool, error) {
	if err := s.ctx.Err(); err != nil {
		return false, err
	}
	var name string
	for _, n := range s.order {
		if s.assigned[n] == nil {
			name = n
			break
		}
	}
	if name == "" {
		return true, nil
	}
	cands, err := s.candidates(name)
	if err != nil {
		if e := apperr.As(err); e.Code == apperr.PackageNotFound {
			r := s.reqs[name][0]
			e = e.With("required_by", r.String())
			return false, e
		}
		return false, err
	}
	tried := false
	for i := range cands {
		c := &cands[i]
		if !s.fits(c, s.reqs[name]) {
			continue
		}
		tried = true
		s.steps++
		if s.steps > s.opt.MaxSteps {
			return false, nil
		}
		if s.assign(name, c) {
			ok, err := s.solve()
			if err != nil || ok {
				return ok, err
			}
		}
		s.unassign(name)
	}
	if !tried {
		s.noteUnsatisfiable(name, cands)
	}
	return false, nil
}

type undo struct {
	reqLens  map[string]int
	orderLen int
}

// assign chooses c for name and adds its dependencies' requirements; false
// when one of them contradicts a choice already made.
func (s *solver) assign(name string, c *candidate) bool {
	u := undo{reqLens: map[string]int{}, orderLen: len(s.order)}
	s.assigned[name] = c
	deps := make([]string, 0, len(c.deps))
	for d := range c.deps {
		deps = append(deps, d)
	}
	sort.Strings(deps)
	chain := append(append([]string{}, s.reqs[name][0].chain...), name+"@"+c.raw)
	ok := true
	for _, d := range deps {
		con, err := ParseConstraint(c.deps[d])
		if err != nil {
			con = &Constraint{raw: c.deps[d], tag: c.deps[d]} // matches nothing
		}
		if _, seen := u.reqLens[d]; !seen {
			u.reqLens[d] = len(s.reqs[d])
		}
		r := requirement{name: d, con: con, chain: chain}
		s.add(r)
		if a := s.assigned[d]; a != nil && !r.con.Match(a.v, a.tags) {
			s.noteConflict(d, s.reqs[d][0], r)
			ok = false
			break
		}
	}
	s.stack = append(s.stack, u)
	return ok
}

func (s *solver) unassign(name string) {
	u := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	for d, n := range u.reqLens {
		if n == 0 {
			delete(s.reqs, d)
		} else {
			s.reqs[d] = s.reqs[d][:n]
		}
	}
	s.order = s.order[:u.orderLen]
	delete(s.assigned, name)
}

// noteUnsatisfiable records why no candidate of name fits: the first pair
// of requirements no single version satisfies.
func (s *solver) noteUnsatisfiable(name string, cands []candidate) {
	reqs := s.reqs[name]
	for j := range reqs {
		any := false
		for i := range cands {
			if reqs[j].con.Match(cands[i].v, cands[i].tags) {
				any = true
				break
			}
		}
		if !any {
			if s.conflict == nil {
				s.conflict = noMatch(name, reqs[j], cands)
			}
			return
		}
	}
	for i := 0; i < len(reqs); i++ {
		for j := i + 1; j < len(reqs); j++ {
			if !s.fitsAny(cands, reqs[i], reqs[j]) {
				s.noteConflict(name, reqs[i], reqs[j])
				return
			}
		}
	}
	if len(reqs) > 1 {
		s.noteConflict(name, reqs[0], reqs[len(reqs)-1])
	}
}

func (s *solver) fitsAny(cands []candidate, a, b requirement) bool {
	for i := range cands {
		if a.con.Match(cands[i].v, cands[i].tags) && b.con.Match(cands[i].v, cands[i].tags) {
			return true
		}
	}
	return false
}

func (s *solver) noteConflict(name string, a, b requirement) {
	if s.conflict != nil {
		return
	}
	ca, cb := a.String(), b.String()
	s.conflict = apperr.New(apperr.DependencyConflict, "dependency conflict on %s: %s vs %s", name, ca, cb).
		WithHint("relax one of the constraints, or install a version of the requester that agrees").
		With("package", name).With("chains", []string{ca, cb})
}

func noMatch(name string, r requirement, cands []candidate) *apperr.Error {
	avail := make([]string, 0, len(cands))
	for _, c := range cands {
		avail = append(avail, c.raw)
	}
	what := r.con.String()
	if what == "" {
		what = "latest"
	}
	code := apperr.PackageNotFound
	if len(r.chain) > 1 {
		code = apperr.DependencyConflict
	}
	return apperr.New(code, "no version of %s matches %s (required by %s)", name, what, r.String()).
		WithHint("available versions: %s", strings.Join(avail, ", ")).
		With("package", name).With("constraint", what).With("available_versions", avail).
		With("chains", []string{r.String()})
}

func (s *solver) result(direct map[string]bool) []Resolved {
	reqBy := map[string][]string{}
	out := make([]Resolved, 0, len(s.assigned))
	for name, c := range s.assigned {
		deps := map[string]string{}
		for d := range c.deps {
			if a := s.assigned[d]; a != nil {
				deps[d] = a.raw
				reqBy[d] = append(reqBy[d], name)
			}
		}
		out = append(out, Resolved{Name: name, Version: c.raw, Registry: c.reg, Dependencies: deps, Direct: direct[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := range out {
		rb := reqBy[out[i].Name]
		sort.Strings(rb)
		if rb == nil {
			rb = []string{}
		}
		out[i].RequiredBy = rb
	}
	return out
}

// Describe renders a resolution for logs and tests: "name@version" per line.
func Describe(rs []Resolved) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s@%s\n", r.Name, r.Version)
	}
	return b.String()
}
