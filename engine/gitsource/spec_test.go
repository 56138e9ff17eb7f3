package gitsource

import (
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
	}{
		{"local:modules/skills/review", Spec{Kind: KindLocal, Path: "modules/skills/review"}},
		{"./modules/x", Spec{Kind: KindLocal, Path: "./modules/x"}},
		{"modules/prompts/p.md", Spec{Kind: KindLocal, Path: "modules/prompts/p.md"}},
		{"/abs/path", Spec{Kind: KindLocal, Path: "/abs/path"}},
		{`C:\skills\x`, Spec{Kind: KindLocal, Path: `C:\skills\x`}},
		{"git:https://github.com/org/skills.git#ref=v1.2.0&subdir=skills/review",
			Spec{Kind: KindGit, URL: "https://github.com/org/skills.git", Ref: "v1.2.0", Subdir: "skills/review"}},
		{"git:https://example.com/org/skills.git", Spec{Kind: KindGit, URL: "https://example.com/org/skills.git"}},
		{"git:https://example.com/org/skills.git#subdir=a/b&shallow=false", Spec{Kind: KindGit, URL: "https://example.com/org/skills.git", Subdir: "a/b"}},
		{"git:git@github.com:org/skills.git#ref=main", Spec{Kind: KindGit, URL: "git@github.com:org/skills.git", Ref: "main"}},
		{"git:file:///srv/repos/skills.git#ref=dev", Spec{Kind: KindGit, URL: "file:///srv/repos/skills.git", Ref: "dev"}},
		{"git+https://gitlab.com/org/repo.git#v2:/skills/pdf", Spec{Kind: KindGit, URL: "https://gitlab.com/org/repo.git", Ref: "v2", Subdir: "skills/pdf"}},
		{"git+https://gitlab.com/org/repo.git#main", Spec{Kind: KindGit, URL: "https://gitlab.com/org/repo.git", Ref: "main"}},
		{"git+https://gitlab.com/org/repo.git", Spec{Kind: KindGit, URL: "https://gitlab.com/org/repo.git"}},
		{"git+ssh://git@host/org/repo.git#v1", Spec{Kind: KindGit, URL: "ssh://git@host/org/repo.git", Ref: "v1"}},
		{"gh:anthropics/skills", Spec{Kind: KindGit, URL: "https://github.com/anthropics/skills.git"}},
		{"gh:anthropics/skills@v1.0.0", Spec{Kind: KindGit, URL: "https://github.com/anthropics/skills.git", Ref: "v1.0.0"}},
		{"gh:anthropics/skills.git/document-skills/pdf@main", Spec{Kind: KindGit, URL: "https://github.com/anthropics/skills.git", Ref: "main", Subdir: "document-skills/pdf"}},
		{"https://github.com/org/repo/tree/main/skills/review", Spec{Kind: KindGit, URL: "https://github.com/org/repo.git", Ref: "main", Subdir: "skills/review"}},
		{"https://github.com/org/repo/blob/v1/prompts/p.md", Spec{Kind: KindGit, URL: "https://github.com/org/repo.git", Ref: "v1", Subdir: "prompts/p.md"}},
		{"https://github.com/org/repo/tree/main", Spec{Kind: KindGit, URL: "https://github.com/org/repo.git", Ref: "main"}},
		{"https://github.com/org/repo", Spec{Kind: KindGit, URL: "https://github.com/org/repo.git"}},
		{"https://github.com/org/repo.git#ref=v1", Spec{Kind: KindGit, URL: "https://github.com/org/repo.git", Ref: "v1"}},
		{"https://gitlab.com/g/sub/repo.git#main:/x", Spec{Kind: KindGit, URL: "https://gitlab.com/g/sub/repo.git", Ref: "main", Subdir: "x"}},
		{"ssh://git@host:2222/org/repo.git", Spec{Kind: KindGit, URL: "ssh://git@host:2222/org/repo.git"}},
		{"git@github.com:org/repo.git#v3", Spec{Kind: KindGit, URL: "git@github.com:org/repo.git", Ref: "v3"}},
		{"file:///srv/repos/skills.git", Spec{Kind: KindGit, URL: "file:///srv/repos/skills.git"}},
		{"pkg:@acme/doc-skills", Spec{Kind: KindPackage, Name: "@acme/doc-skills"}},
		{"pkg:@acme/doc-skills@^1.0.0", Spec{Kind: KindPackage, Name: "@acme/doc-skills", Version: "^1.0.0"}},
		{"pkg:@acme/doc-skills@^1.0.0#pdf", Spec{Kind: KindPackage, Name: "@acme/doc-skills", Version: "^1.0.0", Artifact: "pdf"}},
		{"pkg:tools@1.2.3", Spec{Kind: KindPackage, Name: "tools", Version: "1.2.3"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseSpec(%q) =\n %+v\nwant\n %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		in   string
		code apperr.Code
	}{
		{"", apperr.InvalidArgument},
		{"   ", apperr.InvalidArgument},
		{"local:", apperr.InvalidArgument},
		{"svn:https://example.com/repo", apperr.InvalidArgument},
		{"git:https://example.com/r.git#ref=v1&color=red", apperr.InvalidArgument},
		{"git:https://example.com/r.git#ref=v1&sub", apperr.InvalidArgument},
		{"gh:", apperr.InvalidArgument},
		{"gh:owner", apperr.InvalidArgument},
		{"gh:own er/repo", apperr.InvalidArgument},
		{"gh:owner/repo@", apperr.InvalidArgument},
		{"pkg:", apperr.InvalidArgument},
		{"pkg:@Acme/Doc", apperr.InvalidArgument},
		{"pkg:@acme/doc@", apperr.InvalidArgument},
		{"pkg:@acme/doc#", apperr.InvalidArgument},
		{"https://github.com/org/repo/pulls", apperr.InvalidArgument},
		{"https://github.com/org/repo/tree/main/x#ref=v1", apperr.InvalidArgument},
		// A bad URL or an escaping path is the more specific code.
		{"git:http://example.com/r.git", apperr.SourceURLInvalid},
		{"git://example.com/r.git", apperr.SourceURLInvalid},
		{"git:ftp://example.com/r.git", apperr.SourceURLInvalid},
		{"ftp://example.com/r.git", apperr.SourceURLInvalid},
		{"git:https://example.com/r.git#ref=v1&subdir=../up", apperr.SourceURLInvalid},
		{"git+https://example.com/r.git#v1:/../../etc", apperr.SourceURLInvalid},
		{"gh:owner/repo/../../x", apperr.SourceURLInvalid},
		{"https://github.com/o/r/tree/main/a/../../b", apperr.SourceURLInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseSpec(tt.in)
			if got := apperr.CodeOf(err); got != tt.code {
				t.Fatalf("ParseSpec(%q) code = %q, want %q (%v)", tt.in, got, tt.code, err)
			}
			if tt.code == apperr.InvalidArgument && !strings.Contains(apperr.As(err).Hint, "gh:<owner>/<repo>") {
				t.Errorf("hint does not list the accepted forms: %q", apperr.As(err).Hint)
			}
		})
	}
}

func TestValidateURL(t *testing.T) {
	tests := []struct {
		in     string
		ok     bool
		normal string
	}{
		{"https://github.com/org/repo.git", true, ""},
		{"https://github.com/org/repo", true, ""},
		{"ssh://git@github.com/org/repo.git", true, ""},
		{"git@github.com:org/repo.git", true, ""},
		{"git+https://github.com/org/repo.git", true, "https://github.com/org/repo.git"},
		{"GIT+HTTPS://github.com/org/repo.git", true, "https://github.com/org/repo.git"},
		{"git+ssh://git@host/org/repo.git", true, "ssh://git@host/org/repo.git"},
		{"file:///srv/git/repo.git", true, ""},
		{"file://localhost/srv/git/repo.git", true, ""},
		{"/srv/git/repo.git", true, ""},
		{"https://user@github.com/org/repo.git", true, ""},
		{"", false, ""},
		{"http://github.com/org/repo.git", false, ""},
		{"git://github.com/org/repo.git", false, ""},
		{"ftp://host/repo", false, ""},
		{"https://user:token@github.com/org/repo.git", false, ""},
		{"https:///org/repo.git", false, ""},
		{"https://github.com", false, ""},
		{"https://github.com/", false, ""},
		{"file://otherhost/srv/repo", false, ""},
		{"file://", false, ""},
		{"relative/path", false, ""},
		{"https://github.com/org/repo .git", false, ""},
		{"https://github.com/org/\nrepo", false, ""},
		{"ext::sh -c touch% /tmp/pwned", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			err := ValidateURL(tt.in)
			if tt.ok != (err == nil) {
				t.Fatalf("ValidateURL(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err != nil {
				if code := apperr.CodeOf(err); code != apperr.SourceURLInvalid {
					t.Fatalf("code = %s", code)
				}
				return
			}
			want := tt.normal
			if want == "" {
				want = tt.in
			}
			if got, _ := NormalizeURL(tt.in); got != want {
				t.Errorf("NormalizeURL(%q) = %q, want %q", tt.in, got, want)
			}
		})
	}
	if err := ValidateURL("https://u:secret@github.com/o/r.git"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("password not redacted: %v", err)
	}
}

func TestCleanSubdir(t *testing.T) {
	ok := map[string]string{
		"":                "",
		".":               "",
		"./":              "",
		"skills/review":   "skills/review",
		"./skills/review": "skills/review",
		"skills/review/":  "skills/review",
		"skills//review":  "skills/review",
		`skills\review`:   "skills/review",
		" skills ":        "skills",
		"a/./b":           "a/b",
		"..foo/bar":       "..foo/bar",
	}
	for in, want := range ok {
		got, err := CleanSubdir(in)
		if err != nil || got != want {
			t.Errorf("CleanSubdir(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"/etc", "..", "../x", "a/../../x", "a/..", `..\x`, `\\server\share`, "C:/x", "c:x", "a\x00b"} {
		if _, err := CleanSubdir(in); apperr.CodeOf(err) != apperr.SourceURLInvalid {
			t.Errorf("CleanSubdir(%q) error = %v, want E_SOURCE_URL_INVALID", in, err)
		}
	}
}
