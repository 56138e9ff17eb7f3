// Package resolve picks one version of every package a set of requests
// needs, with npm's semver rules and real backtracking across transitive
// dependencies.
//
// It knows nothing about registries, archives or files: callers hand it a
// [Source] of package metadata, so it can be tested (and fuzzed, and
// benchmarked) on its own.
package resolve

import (
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// nameRe is the package name rule of aam.yaml: optional scope, then a name.
var nameRe = lazyregexp.New(`^(@[a-z0-9][a-z0-9_-]{0,63}/)?[a-z0-9][a-z0-9-]{0,63}$`)

// tagRe is what a dist-tag looks like (npm: anything that is not a range).
var tagRe = lazyregexp.New(`^[A-Za-z][A-Za-z0-9._-]{0,63}$`)

// preRe finds the versions with a pre-release part written in a constraint.
var preRe = lazyregexp.New(`v?(\d+)\.(\d+)\.(\d+)-[0-9A-Za-z.-]+`)

// Spec is one package request: a name and a constraint, which is an npm
// range, a dist-tag, or empty (the "latest" tag, else the highest release).
type Spec struct {
	Name       string
	Constraint string
}

// String renders the spec the way it is written on the command line.
func (s Spec) String() string {
	if s.Constraint == "" {
		return s.Name
	}
	return s.Name + "@" + s.Constraint
}

// ValidName reports whether name follows the package name rule.
func ValidName(name string) bool { return nameRe.MatchString(name) }

// ParseSpec splits "name", "name@range", "@scope/name@tag" into a Spec and
// checks both halves.
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	name, con := s, ""
	at := strings.LastIndex(s, "@")
	if at > 0 {
		name, con = s[:at], strings.TrimSpace(s[at+1:])
	}
	if !ValidName(name) {
		return Spec{}, apperr.New(apperr.InvalidArgument, "invalid package name %q", name).
			WithHint("package names are lowercase, optionally scoped: @scope/name").
			With("spec", s)
	}
	if at > 0 && con == "" {
		return Spec{}, apperr.New(apperr.InvalidArgument, "package spec %q has an empty version after @", s).
			WithHint("write name, name@^1.2.0 or name@latest").With("spec", s)
	}
	if _, err := ParseConstraint(con); err != nil {
		return Spec{}, err
	}
	return Spec{Name: name, Constraint: con}, nil
}

// Constraint is a parsed npm-style version constraint or dist-tag.
type Constraint struct {
	raw string
	tag string
	c   *semver.Constraints
	// pre lists the major.minor.patch tuples that carry a pre-release in
	// the constraint text: npm lets a pre-release version match only when
	// the constraint names a pre-release of the same tuple.
	pre map[[3]uint64]bool
}

// ParseConstraint parses an npm range ("^1.2.0", "~1.2", "1.x",
// ">=1.0.0 <2.0.0", "1.0.0 - 1.4.0", "a || b"), a dist-tag ("latest",
// "next"), or "" (the latest tag, else any release).
func ParseConstraint(s string) (*Constraint, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return &Constraint{tag: "latest"}, nil
	}
	c, err := semver.NewConstraint(s)
	if err != nil {
		if tagRe.MatchString(s) {
			return &Constraint{raw: s, tag: s}, nil
		}
		return nil, apperr.New(apperr.InvalidArgument, "invalid version constraint %q", s).
			WithHint("use an npm range such as ^1.2.0, ~1.2, 1.x, >=1.0.0 <2.0.0, or a dist-tag").
			With("constraint", s)
	}
	out := &Constraint{raw: s, c: c}
	for _, m := range preRe.FindAllStringSubmatch(s, -1) {
		v, err := semver.NewVersion(strings.TrimPrefix(m[0], "v"))
		if err == nil {
			if out.pre == nil {
				out.pre = map[[3]uint64]bool{}
			}
			out.pre[[3]uint64{v.Major(), v.Minor(), v.Patch()}] = true
		}
	}
	return out, nil
}

// String returns the constraint as written ("" for the default).
func (c *Constraint) String() string { return c.raw }

// Tag returns the dist-tag the constraint names, or "".
func (c *Constraint) Tag() string { return c.tag }

// Match reports whether v satisfies the constraint; tags are the dist-tags
// of the registry entry v comes from.
func (c *Constraint) Match(v *semver.Version, tags map[string]string) bool {
	if c.c == nil {
		want, ok := tags[c.tag]
		if !ok {
			// An empty constraint on a package without a latest tag takes
			// the highest release.
			return c.raw == "" && v.Prerelease() == ""
		}
		w, err := semver.NewVersion(want)
		return err == nil && w.Equal(v)
	}
	if v.Prerelease() != "" && !c.pre[[3]uint64{v.Major(), v.Minor(), v.Patch()}] {
		return false
	}
	return c.c.Check(v)
}
