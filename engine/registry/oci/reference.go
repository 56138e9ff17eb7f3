package oci

import (
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// Scheme is the URL scheme of OCI registries in config.toml.
const Scheme = "oci://"

// IndexRepo is the repository, under the namespace, that holds the search
// index; no package may use this name.
const IndexRepo = "agentpack-index"

// IndexTag is the tag of the search index artifact.
const IndexTag = "latest"

// Location is a parsed oci://host[:port]/namespace URL.
type Location struct {
	// Host is host[:port] as written (lower-cased).
	Host string
	// Namespace is the repository prefix without slashes at either end; it
	// may be empty (packages at the registry's top level).
	Namespace string
}

// repoPath matches one OCI repository path (distribution spec).
var repoPath = lazyregexp.New(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`)

// tagPattern matches one OCI tag (distribution spec).
var tagPattern = lazyregexp.New(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// ParseURL parses oci://host[:port]/namespace. Credentials, queries and
// fragments in the URL are refused so no secret ends up in config.toml.
func ParseURL(raw string) (Location, error) {
	bad := func(why string) error {
		return apperr.New(apperr.InvalidArgument, "invalid OCI registry URL %q: %s", redactURL(raw), why).
			WithHint("write it as oci://host[:port]/namespace, e.g. oci://ghcr.io/my-org/agentpack").
			With("reason_code", "oci_url_invalid")
	}
	if !strings.HasPrefix(strings.ToLower(raw), Scheme) {
		return Location{}, bad("it must start with oci://")
	}
	u, err := url.Parse("https://" + raw[len(Scheme):])
	if err != nil {
		return Location{}, bad("it does not parse")
	}
	switch {
	case u.User != nil:
		return Location{}, bad("credentials do not belong in the URL; use docker login or AGENTPACK_REGISTRY_TOKEN")
	case u.RawQuery != "" || u.Fragment != "" || strings.Contains(raw, "?") || strings.Contains(raw, "#"):
		return Location{}, bad("it has a query or fragment")
	case u.Host == "" || u.Hostname() == "":
		return Location{}, bad("it has no host")
	}
	if p := u.Port(); p != "" && strings.Trim(p, "0123456789") != "" {
		return Location{}, bad("the port is not a number")
	}
	ns := strings.Trim(u.Path, "/")
	if ns != "" && !repoPath.MatchString(ns) {
		return Location{}, bad("the namespace must be lower-case path components of letters, digits, '.', '_' and '-'")
	}
	return Location{Host: strings.ToLower(u.Host), Namespace: ns}, nil
}

// String returns the canonical oci:// URL.
func (l Location) String() string {
	if l.Namespace == "" {
		return Scheme + l.Host
	}
	return Scheme + l.Host + "/" + l.Namespace
}

// Repo returns the full repository path of name under the namespace.
func (l Location) Repo(name string) string {
	if l.Namespace == "" {
		return name
	}
	return l.Namespace + "/" + name
}

// PlainHTTP reports whether the registry is spoken to over plain HTTP: only
// for loopback hosts, never for anything else.
func (l Location) PlainHTTP() bool { return IsLoopback(l.Host) }

// IsLoopback reports whether host[:port] names the loopback interface:
// localhost, 127.0.0.0/8 or ::1. Names other than localhost are never
// resolved, so DNS cannot turn a remote host into a plain-HTTP one.
func IsLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RepoName maps a package name to its repository name: "@scope/name" becomes
// "scope--name", as on disk in local registries.
func RepoName(pkg string) string { return aampkg.DiskName(pkg) }

// VersionTag maps a semver version to a valid OCI tag. Tags cannot hold
// '+', so build metadata is joined with '_' (which semver never uses), as
// Helm does: 1.2.0+build.5 is tagged 1.2.0_build.5.
func VersionTag(version string) string { return strings.ReplaceAll(version, "+", "_") }

// TagVersion is the inverse of [VersionTag]: it returns the version a tag
// names and whether the tag is a version tag at all (anything else, such as
// "latest" or "beta", is a dist-tag).
func TagVersion(tag string) (*semver.Version, bool) {
	if strings.Count(tag, "_") > 1 {
		return nil, false
	}
	v, err := semver.StrictNewVersion(strings.Replace(tag, "_", "+", 1))
	if err != nil {
		return nil, false
	}
	return v, true
}

// CheckDistTag refuses a dist-tag that is not a valid OCI tag or that would
// read as a version.
func CheckDistTag(tag string) error {
	if !tagPattern.MatchString(tag) {
		return apperr.New(apperr.InvalidArgument, "tag %q is not a valid OCI tag", tag).
			WithHint("use letters, digits, '.', '_' and '-' (at most 128), e.g. latest or beta")
	}
	if _, ok := TagVersion(tag); ok {
		return apperr.New(apperr.InvalidArgument, "tag %q looks like a version", tag).
			WithHint("dist-tags name channels such as latest, next or beta; versions come from aam.yaml")
	}
	return nil
}

// SortedVersions returns the version tags among tags, sorted by semver
// precedence (ties, which differ only in build metadata, by tag), lowest
// first, with the version each names.
func SortedVersions(tags []string) (versions []*semver.Version, distTags []string) {
	for _, t := range tags {
		if v, ok := TagVersion(t); ok {
			versions = append(versions, v)
		} else if tagPattern.MatchString(t) {
			distTags = append(distTags, t)
		}
	}
	slices.SortFunc(versions, func(a, b *semver.Version) int {
		if c := a.Compare(b); c != 0 {
			return c
		}
		return strings.Compare(a.Original(), b.Original())
	})
	slices.Sort(distTags)
	return versions, distTags
}

// redactURL drops any user info from a URL before it is shown.
func redactURL(raw string) string {
	at := strings.Index(raw, "@")
	scheme := strings.Index(raw, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return raw
	}
	if slash := strings.Index(raw[scheme+3:], "/"); slash >= 0 && scheme+3+slash < at {
		return raw // the @ is in the path (a scoped name), not user info
	}
	return raw[:scheme+3] + "***@" + raw[at+1:]
}
