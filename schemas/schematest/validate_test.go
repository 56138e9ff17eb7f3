package schematest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/schemas"
)

// invalidWant maps each testdata/invalid file to the JSON pointer that
// Validate must name for it.
var invalidWant = map[string]string{
	"ok_false_with_data":              "/data",
	"ok_false_without_errors":         "/errors",
	"ok_true_with_errors":             "/errors",
	"unknown_top_level_key":           "/exit_code",
	"bad_error_code":                  "/errors/0/code",
	"error_unknown_key":               "/errors/0/detail",
	"schema_version_2":                "/schema_version",
	"warnings_not_strings":            "/warnings/0",
	"data_not_object":                 "/data",
	"unknown_command":                 "/command",
	"not_json":                        "",
	"missing_path_posix":              "/data/changes/1/path_posix",
	"bad_op_enum":                     "/data/changes/0/op",
	"bad_sha256":                      "/data/changes/1/before_sha256",
	"update_without_update_kind":      "/data/changes/1/update_kind",
	"create_with_update_kind":         "/data/changes/0/update_kind",
	"create_with_before":              "/data/changes/0/before_sha256",
	"diff_unified_not_string":         "/data/changes/0/unified",
	"preview_bare_hash":               "/data/diff/files/0/after_hash",
	"deploy_applied_without_snapshot": "/data/snapshot_id",
	"deploy_bad_reason":               "/data/reason",
	"status_missing_pending":          "/data/summary_by_root/0/summary/pending",
	"status_bad_kind":                 "/data/drift/0/kind",
	"status_missing_root_posix":       "/data/drift/1/root_posix",
	"rollback_restored_list":          "/data/restored",
	"snapshots_bad_created_at":        "/data/snapshots/0/created_at",
	"snapshots_show_files_count":      "/data/snapshot/files",
	"snapshots_prune_missing_kept":    "/data/kept",
	"snapshots_no_shape":              "/data/snapshots",
	"help_bad_arg_kind":               "/data/global_args/0/kind",
	"init_missing_repo_posix":         "/data/repo_posix",
	"add_source_string":               "/data/module/source",
	"doctor_bad_status":               "/data/checks/0/status",
	"explain_bad_kind":                "/data/kind",
	"lock_missing_lockfile_posix":     "/data/lockfile_posix",
}

// TestExamples validates every envelope under testdata/valid (must pass) and
// testdata/invalid (must fail, naming the pointer in invalidWant).
func TestExamples(t *testing.T) {
	type example struct {
		file    string
		valid   bool
		pointer string
	}
	var table []example
	for _, dir := range []string{"valid", "invalid"} {
		paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no examples in testdata/%s: %v", dir, err)
		}
		for _, p := range paths {
			ex := example{file: p, valid: dir == "valid"}
			if !ex.valid {
				name := strings.TrimSuffix(filepath.Base(p), ".json")
				want, ok := invalidWant[name]
				if !ok {
					t.Errorf("%s: no entry in invalidWant", p)
					continue
				}
				ex.pointer = want
			}
			table = append(table, ex)
		}
	}
	seen := map[string]bool{}
	for _, ex := range table {
		seen[strings.TrimSuffix(filepath.Base(ex.file), ".json")] = !ex.valid
	}
	for name := range invalidWant {
		if !seen[name] {
			t.Errorf("invalidWant[%q] has no testdata/invalid/%s.json", name, name)
		}
	}

	for _, ex := range table {
		t.Run(ex.file, func(t *testing.T) {
			doc, err := os.ReadFile(ex.file)
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(doc)
			if ex.valid {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error naming %q, got none", ex.pointer)
			}
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("want *ValidationError, got %T: %v", err, err)
			}
			var pointers []string
			for _, p := range verr.Problems {
				pointers = append(pointers, p.Pointer)
			}
			if !slices.Contains(pointers, ex.pointer) {
				t.Fatalf("want a problem at %q, got %q (%v)", ex.pointer, pointers, err)
			}
			shown := ex.pointer
			if shown == "" {
				shown = "/"
			}
			if !strings.Contains(err.Error(), shown+": ") {
				t.Fatalf("error text does not name %q: %v", shown, err)
			}
		})
	}
}

// TestEveryCommandHasValidExample keeps the valid examples covering every
// data schema.
func TestEveryCommandHasValidExample(t *testing.T) {
	covered := map[string]bool{}
	paths, _ := filepath.Glob(filepath.Join("testdata", "valid", "*.json"))
	for _, p := range paths {
		var env struct {
			OK      bool   `json:"ok"`
			Command string `json:"command"`
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if env.OK {
			covered[env.Command] = true
		}
	}
	for _, name := range schemas.CommandNames() {
		if !covered[name] {
			t.Errorf("command %q has no ok:true example in testdata/valid", name)
		}
	}
}

func TestSchemasCompile(t *testing.T) {
	if err := compiledSchemas().err; err != nil {
		t.Fatal(err)
	}
}

func TestValidateConcurrent(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("testdata", "valid", "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for range 8 {
		go func() { done <- Validate(doc) }()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestSchemaCommandOutput validates the envelope `agentpack schema --json`
// prints, built from this package's API, against the schema command's own
// data schema.
func TestSchemaCommandOutput(t *testing.T) {
	commands := map[string]json.RawMessage{}
	for _, name := range schemas.CommandNames() {
		commands[name], _ = schemas.Command(name)
	}
	doc, err := json.Marshal(map[string]any{
		"schema_version": 1, "ok": true, "command": "schema", "command_id": "schema",
		"command_path": []string{"schema"}, "version": "0.0.0",
		"data":     map[string]any{"envelope": schemas.Envelope(), "commands": commands},
		"warnings": []string{}, "errors": []any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(doc); err != nil {
		t.Fatal(err)
	}
}
