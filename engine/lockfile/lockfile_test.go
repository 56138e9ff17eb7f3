package lockfile

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

func sample() *Lockfile {
	return &Lockfile{
		Version:     1,
		GeneratedAt: "2026-01-16T00:00:00Z",
		Modules: []Module{
			{
				ID:              "skill:review",
				Type:            "skill",
				ResolvedSource:  ResolvedSource{Git: &GitSource{URL: "https://github.com/acme/skills.git", Commit: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Subdir: "skills/review"}},
				ResolvedVersion: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				SHA256:          "abc",
				FileManifest: []File{
					{Path: "b.md", SHA256: "22", Bytes: 2},
					{Path: "SKILL.md", SHA256: "11", Bytes: 1},
				},
			},
			{
				ID:              "instructions:base",
				Type:            "instructions",
				ResolvedSource:  ResolvedSource{LocalPath: &LocalPathSource{Path: "modules/instructions/base"}},
				ResolvedVersion: "local",
				SHA256:          "def",
				FileManifest:    nil,
			},
		},
	}
}

// want is byte for byte what the original tool's serde_json::to_string_pretty
// writes for sample(): unset sources as null, empty arrays as [].
const want = `{
  "version": 1,
  "generated_at": "2026-01-16T00:00:00Z",
  "modules": [
    {
      "id": "instructions:base",
      "type": "instructions",
      "resolved_source": {
        "local_path": {
          "path": "modules/instructions/base"
        },
        "git": null
      },
      "resolved_version": "local",
      "sha256": "def",
      "file_manifest": []
    },
    {
      "id": "skill:review",
      "type": "skill",
      "resolved_source": {
        "local_path": null,
        "git": {
          "url": "https://github.com/acme/skills.git",
          "commit": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          "subdir": "skills/review"
        }
      },
      "resolved_version": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sha256": "abc",
      "file_manifest": [
        {
          "path": "SKILL.md",
          "sha256": "11",
          "bytes": 1
        },
        {
          "path": "b.md",
          "sha256": "22",
          "bytes": 2
        }
      ]
    }
  ]
}
`

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l := sample()
	if err := l.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("saved bytes differ:\n%s\nwant:\n%s", got, want)
	}
	if l.Modules[0].ID != "skill:review" {
		t.Errorf("Save reordered the receiver")
	}

	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := loaded.Find("skill:review"); m == nil || m.ResolvedSource.Git.Subdir != "skills/review" || m.FileManifest[0].Path != "SKILL.md" {
		t.Fatalf("Find(skill:review) = %+v", m)
	}
	if loaded.Find("nope") != nil {
		t.Errorf("Find(nope) != nil")
	}
	// Saving what was loaded gives the same bytes: the order is stable.
	if err := loaded.Save(path); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(path)
	if string(again) != want {
		t.Fatalf("second save differs:\n%s", again)
	}
}

func TestLoadOriginalLockfile(t *testing.T) {
	// Written by the original tool's test suite: no local_path key at all.
	const original = `{
  "version": 1,
  "generated_at": "2026-01-16T00:00:00Z",
  "modules": [
    {
      "id": "instructions:one",
      "type": "instructions",
      "resolved_source": {
        "git": {
          "url": "https://github.com/acme/repo.git",
          "commit": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          "subdir": ""
        }
      },
      "resolved_version": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sha256": "deadbeef",
      "file_manifest": []
    }
  ]
}
`
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m := l.Find("instructions:one")
	if m == nil || m.ResolvedSource.LocalPath != nil || m.ResolvedSource.Git == nil || m.ResolvedSource.Git.URL != "https://github.com/acme/repo.git" {
		t.Fatalf("module = %+v", m)
	}
}

func TestUpsertRemove(t *testing.T) {
	l := New()
	l.Upsert(Module{ID: "b"})
	l.Upsert(Module{ID: "a"})
	l.Upsert(Module{ID: "b", Type: "skill"})
	if ids := []string{l.Modules[0].ID, l.Modules[1].ID}; !reflect.DeepEqual(ids, []string{"a", "b"}) || l.Modules[1].Type != "skill" {
		t.Fatalf("modules = %+v", l.Modules)
	}
	if !l.Remove("a") || l.Remove("a") || len(l.Modules) != 1 {
		t.Fatalf("Remove: %+v", l.Modules)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		code apperr.Code
	}{
		{"missing", filepath.Join(dir, "absent.json"), apperr.LockfileMissing},
		{"bad json", write("bad.json", `{"version": 1, `), apperr.LockfileInvalid},
		{"not an object", write("arr.json", `[]`), apperr.LockfileInvalid},
		{"no version", write("nover.json", `{"modules": []}`), apperr.LockfileInvalid},
		{"string version", write("strver.json", `{"version": "1"}`), apperr.LockfileInvalid},
		{"version 2", write("v2.json", `{"version":2,"generated_at":"t","modules":[]}`), apperr.LockfileUnsupported},
		{"version 2 new shape", write("v2b.json", `{"version":2,"modules":{"x":1}}`), apperr.LockfileUnsupported},
		{"wrong field type", write("type.json", `{"version":1,"generated_at":"t","modules":[{"id":"a","file_manifest":[{"path":"x","sha256":"y","bytes":"3"}]}]}`), apperr.LockfileInvalid},
		{"negative bytes", write("neg.json", `{"version":1,"generated_at":"t","modules":[{"id":"a","file_manifest":[{"path":"x","sha256":"y","bytes":-1}]}]}`), apperr.LockfileInvalid},
		{"missing id", write("noid.json", `{"version":1,"generated_at":"t","modules":[{"type":"skill"}]}`), apperr.LockfileInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.path)
			if got := apperr.CodeOf(err); got != tt.code {
				t.Fatalf("code = %q, want %q (err: %v)", got, tt.code, err)
			}
			if apperr.As(err).Details["reason_code"] == nil {
				t.Errorf("no reason_code in details: %v", apperr.As(err).Details)
			}
		})
	}
}

func TestLoadEmptyModules(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte(`{"version":1,"generated_at":"t","modules":null}`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Modules == nil {
		t.Fatal("Modules is nil")
	}
}
