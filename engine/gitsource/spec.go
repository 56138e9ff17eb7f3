// Package gitsource parses source specs and fetches git sources into
// agentpack's immutable, content-verified checkout cache, using go-git only
// (no git binary).
package gitsource

import (
	"net/url"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// The kinds of [Spec].
const (
	KindLocal   = "local"
	KindGit     = "git"
	KindPackage = "package"
)

// Spec is a parsed command-line source spec.
type Spec struct {
	// Kind is KindLocal, KindGit or KindPackage.
	Kind string
	// Path is the local path, exactly as given (KindLocal).
	Path string
	// URL is the normalised git URL (see [NormalizeURL]); Ref is empty when
	// the spec names none (the remote's default branch); Subdir is clean and
	// repo-relative (KindGit).
	URL, Ref, Subdir string
	// Name, Version (a constraint, empty for any) and Artifact (optional)
	// describe a package (KindPackage).
	Name, Version, Artifact string
}

const specHint = "accepted forms: <path>, local:<path>, git:<url>#ref=<ref>&subdir=<path>, " +
	"git+https://host/org/repo.git#<ref>:/<subpath>, gh:<owner>/<repo>[/<path>][@<ref>], " +
	"https://github.com/<owner>/<repo>/tree/<ref>/<path>, https://…, ssh://…, git@host:org/repo.git, " +
	"file:///path/to/repo, pkg:<@scope/name>[@<constraint>][#<artifact>]"

var (
	schemePrefix = lazyregexp.New(`^[A-Za-z][A-Za-z0-9+.-]+:`)
	urlPrefix    = lazyregexp.New(`^[A-Za-z][A-Za-z0-9+.-]+://`)
	ghOwner      = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}$`)
	ghRepo       = lazyregexp.New(`^[A-Za-z0-9._-]+$`)
	pkgName      = lazyregexp.New(`^(@[a-z0-9][a-z0-9_-]{0,63}/)?[a-z0-9][a-z0-9-]{0,63}$`)
)

func invalidSpec(s, format string, args ...any) *apperr.Error {
	return apperr.New(apperr.InvalidArgument, format, args...).WithHint(specHint).With("spec", s)
}

// ParseSpec parses a source spec given on the command line.
//
// Git URLs (https, ssh, scp-style, git+https, git+ssh, file) may carry a
// fragment, either query-style "#ref=<ref>&subdir=<path>" or
// "#<ref>[:/<subpath>]". A string with no scheme is a local path. Syntax
// errors are E_INVALID_ARGUMENT with a hint listing the accepted forms; a
// disallowed URL or an escaping subdir is E_SOURCE_URL_INVALID.
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return Spec{}, invalidSpec(s, "empty source spec")
	case strings.HasPrefix(s, "local:"):
		p := strings.TrimPrefix(s, "local:")
		if p == "" {
			return Spec{}, invalidSpec(s, "local: needs a path")
		}
		return Spec{Kind: KindLocal, Path: p}, nil
	case strings.HasPrefix(s, "pkg:"):
		return parsePackage(s)
	case strings.HasPrefix(s, "gh:"):
		return parseGitHub(s)
	case strings.HasPrefix(s, "git:") && !strings.HasPrefix(s, "git://"):
		return parseGitURL(s, strings.TrimPrefix(s, "git:"))
	case scpLike.MatchString(s) || urlPrefix.MatchString(s):
		return parseGitURL(s, s)
	case schemePrefix.MatchString(s):
		return Spec{}, invalidSpec(s, "unknown source spec prefix in %q", s)
	default:
		return Spec{Kind: KindLocal, Path: s}, nil
	}
}

// parseGitURL parses "<url>[#fragment]"; s is the whole spec, for errors.
func parseGitURL(s, rest string) (Spec, error) {
	raw, frag, _ := strings.Cut(rest, "#")
	u, err := NormalizeURL(raw)
	if err != nil {
		return Spec{}, err
	}
	sp := Spec{Kind: KindGit, URL: u}
	if gh, ok, err := parseGitHubWeb(s, u); err != nil {
		return Spec{}, err
	} else if ok {
		if frag != "" && (gh.Ref != "" || gh.Subdir != "") {
			return Spec{}, invalidSpec(s, "give the ref either in the /tree/ path or in the fragment, not both")
		}
		sp = gh
	}
	var sub string
	switch {
	case frag == "":
	case strings.Contains(frag, "="):
		for part := range strings.SplitSeq(frag, "&") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			k, v, ok := strings.Cut(part, "=")
			switch {
			case !ok:
				return Spec{}, invalidSpec(s, "invalid fragment segment %q (want key=value)", part)
			case k == "ref":
				sp.Ref = v
			case k == "subdir":
				sub = v
			case k == "shallow":
				// Accepted for compatibility with the original tool; the
				// clone is always shallow when the server allows it.
			default:
				return Spec{}, invalidSpec(s, "unknown fragment key %q (known: ref, subdir, shallow)", k)
			}
		}
	default:
		ref, p, _ := strings.Cut(frag, ":")
		sp.Ref, sub = ref, strings.TrimPrefix(p, "/")
	}
	if sub != "" {
		if sp.Subdir, err = CleanSubdir(sub); err != nil {
			return Spec{}, err
		}
	}
	return sp, nil
}

// parseGitHubWeb recognises github.com browser URLs: /owner/repo,
// /owner/repo/tree/<ref>/<path> and /owner/repo/blob/<ref>/<path>. The ref is
// the first segment after tree/ or blob/ (a ref containing '/' cannot be told
// apart from the path; use gh:…@ref or a fragment for those).
func parseGitHubWeb(s, u string) (Spec, bool, error) {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "https" || (p.Host != "github.com" && p.Host != "www.github.com") {
		return Spec{}, false, nil
	}
	segs := strings.Split(strings.Trim(p.Path, "/"), "/")
	if len(segs) < 2 {
		return Spec{}, false, nil
	}
	sp := Spec{Kind: KindGit, URL: "https://github.com/" + segs[0] + "/" + strings.TrimSuffix(segs[1], ".git") + ".git"}
	switch {
	case len(segs) == 2:
		return sp, true, nil
	case len(segs) >= 4 && (segs[2] == "tree" || segs[2] == "blob"):
		sp.Ref = segs[3]
		sub, err := CleanSubdir(strings.Join(segs[4:], "/"))
		if err != nil {
			return Spec{}, false, err
		}
		sp.Subdir = sub
		return sp, true, nil
	default:
		return Spec{}, false, invalidSpec(s, "unsupported github.com URL %q (want /owner/repo or /owner/repo/tree/<ref>/<path>)", u)
	}
}

// parseGitHub parses gh:<owner>/<repo>[/<path>][@<ref>].
func parseGitHub(s string) (Spec, error) {
	rest := strings.TrimPrefix(s, "gh:")
	var ref string
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest, ref = rest[:i], rest[i+1:]
		if ref == "" {
			return Spec{}, invalidSpec(s, "empty ref after @ in %q", s)
		}
	}
	segs := strings.SplitN(rest, "/", 3)
	if len(segs) < 2 {
		return Spec{}, invalidSpec(s, "gh: needs <owner>/<repo>, got %q", rest)
	}
	owner, repo := segs[0], strings.TrimSuffix(segs[1], ".git")
	if !ghOwner.MatchString(owner) || !ghRepo.MatchString(repo) || repo == "." || repo == ".." {
		return Spec{}, invalidSpec(s, "invalid GitHub owner/repo %q", segs[0]+"/"+segs[1])
	}
	sp := Spec{Kind: KindGit, URL: "https://github.com/" + owner + "/" + repo + ".git", Ref: ref}
	if len(segs) == 3 {
		sub, err := CleanSubdir(segs[2])
		if err != nil {
			return Spec{}, err
		}
		sp.Subdir = sub
	}
	return sp, nil
}

// parsePackage parses pkg:<name>[@<constraint>][#<artifact>].
func parsePackage(s string) (Spec, error) {
	rest, artifact, hasArtifact := strings.Cut(strings.TrimPrefix(s, "pkg:"), "#")
	if hasArtifact && artifact == "" {
		return Spec{}, invalidSpec(s, "empty artifact after # in %q", s)
	}
	name, version := rest, ""
	// A scoped name starts with '@'; the version separator is the next one.
	if i := strings.Index(rest[min(1, len(rest)):], "@"); i >= 0 {
		i += min(1, len(rest))
		name, version = rest[:i], rest[i+1:]
		if version == "" {
			return Spec{}, invalidSpec(s, "empty version constraint after @ in %q", s)
		}
	}
	if !pkgName.MatchString(name) {
		return Spec{}, invalidSpec(s, "invalid package name %q (want name or @scope/name, lowercase)", name)
	}
	return Spec{Kind: KindPackage, Name: name, Version: version, Artifact: artifact}, nil
}
