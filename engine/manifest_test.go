package engine_test

import (
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
)

func TestParseManifestErrors(t *testing.T) {
	known := targets.NewSet().Names()
	tests := []struct {
		name, yaml string
		code       apperr.Code
		contains   string
	}{
		{"syntax", "version: 1\nprofiles: [\n", apperr.ConfigInvalid, "line"},
		{"version", "version: 2\nprofiles: {default: {}}\n", apperr.ConfigUnsupported, "version 2"},
		{"no version", "profiles: {default: {}}\n", apperr.ConfigInvalid, "version"},
		{"no default", "version: 1\nprofiles: {work: {}}\n", apperr.ConfigInvalid, "default"},
		{"unknown module key", "version: 1\nprofiles: {default: {}}\nmodules:\n  - id: a\n    type: skill\n    colour: red\n", apperr.ConfigInvalid, "line 6"},
		{"duplicate", "version: 1\nprofiles: {default: {}}\nmodules:\n  - {id: a, type: skill, source: {local_path: {path: x}}}\n  - {id: a, type: skill, source: {local_path: {path: y}}}\n", apperr.ConfigInvalid, "duplicate"},
		{"bad type", "version: 1\nprofiles: {default: {}}\nmodules:\n  - {id: a, type: widget, source: {local_path: {path: x}}}\n", apperr.ConfigInvalid, "widget"},
		{"two sources", "version: 1\nprofiles: {default: {}}\nmodules:\n  - {id: a, type: skill, source: {local_path: {path: x}, git: {url: https://x/y.git}}}\n", apperr.ConfigInvalid, "exactly one source"},
		{"no source", "version: 1\nprofiles: {default: {}}\nmodules:\n  - {id: a, type: skill}\n", apperr.ConfigInvalid, "exactly one source"},
		{"unknown target", "version: 1\nprofiles: {default: {}}\ntargets: {emacs: {}}\n", apperr.TargetUnsupported, "emacs"},
		{"bad scope", "version: 1\nprofiles: {default: {}}\ntargets: {codex: {scope: galaxy}}\n", apperr.ConfigInvalid, "galaxy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Parse([]byte(tt.yaml), known)
			if apperr.CodeOf(err) != tt.code {
				t.Fatalf("want %s, got %v", tt.code, err)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("error %q should mention %q", err, tt.contains)
			}
		})
	}
}

func TestUnknownTopLevelKeyWarns(t *testing.T) {
	m, err := manifest.Parse([]byte("version: 1\nprofiles: {default: {}}\nfuture_key: 3\n"), targets.NewSet().Names())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "future_key") {
		t.Fatalf("want one warning naming future_key, got %v", m.Warnings)
	}
}

// FuzzParseManifest checks the loader never panics and always returns either
// a manifest or a typed error. Seeds live in testdata/fuzz/FuzzParseManifest.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(codexOnlyManifest))
	f.Add([]byte("version: 1\nprofiles: {default: {include_tags: [a]}}\n"))
	f.Add([]byte("version: [\n"))
	f.Add([]byte("---\n- a\n- b\n"))
	f.Add([]byte("version: 1\nprofiles:\n  default: ~\nmodules: ~\n"))
	f.Add([]byte("version: 1\nprofiles: {default: {}}\nmodules:\n  - &a {id: x}\n  - *a\n"))
	known := targets.NewSet().Names()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := manifest.Parse(data, known)
		if err == nil && m == nil {
			t.Fatal("nil manifest without error")
		}
		if err != nil {
			if code := apperr.CodeOf(err); code == apperr.Unexpected || code == "" {
				t.Fatalf("untyped error %v", err)
			}
		}
	})
}
