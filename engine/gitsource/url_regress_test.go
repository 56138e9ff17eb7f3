package gitsource

import (
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TestGitPlusURLRevalidated: net/url checks an https port only under the
// https scheme, so "git+https://host:1:2/…" parsed fine and was normalised to
// a URL that lock then rejected. The spec must be refused at once.
func TestGitPlusURLRevalidated(t *testing.T) {
	for _, in := range []string{
		"git+https://example.com:1:2/org/repo.git",
		"git+https://example.com:x/org/repo.git",
		"git+ssh://git@example.com:1:2/org/repo.git",
		"ssh://git@example.com:1:2/org/repo.git",
	} {
		if _, err := NormalizeURL(in); apperr.CodeOf(err) != apperr.SourceURLInvalid {
			t.Errorf("NormalizeURL(%q) = %v, want %s", in, err, apperr.SourceURLInvalid)
		}
		if _, err := ParseSpec(in + "#main"); apperr.CodeOf(err) != apperr.SourceURLInvalid {
			t.Errorf("ParseSpec(%q) = %v, want %s", in, err, apperr.SourceURLInvalid)
		}
	}
}

// TestNormalizeURLIdempotent: whatever NormalizeURL accepts, it accepts
// again in its normalised form (what add writes and lock reads back).
func TestNormalizeURLIdempotent(t *testing.T) {
	for _, in := range []string{
		"git+https://gitlab.com/org/repo.git",
		"git+https://gitlab.com:8443/org/repo.git",
		"GIT+HTTPS://gitlab.com/org/repo.git",
		"git+ssh://git@host:2222/org/repo.git",
		"git+ssh://git@[::1]:2222/org/repo.git",
		"https://github.com/org/repo.git",
		"git@github.com:org/repo.git",
		"file:///srv/git/repo.git",
	} {
		n, err := NormalizeURL(in)
		if err != nil {
			t.Errorf("NormalizeURL(%q): %v", in, err)
			continue
		}
		if again, err := NormalizeURL(n); err != nil || again != n {
			t.Errorf("NormalizeURL(%q) = %q, then %q, %v", in, n, again, err)
		}
	}
}
