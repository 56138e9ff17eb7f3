package schemas

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// TestSchemaHeaders: every file is a draft 2020-12 object schema whose $id
// is its name under BaseURL (schematest.TestSchemasCompile compiles them).
func TestSchemaHeaders(t *testing.T) {
	check := func(file string, raw json.RawMessage) {
		t.Helper()
		var head struct {
			Schema string `json:"$schema"`
			ID     string `json:"$id"`
			Type   string `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if head.Schema != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema = %q, want draft 2020-12", file, head.Schema)
		}
		if head.ID != BaseURL+file {
			t.Errorf("%s: $id = %q, want %q", file, head.ID, BaseURL+file)
		}
		if head.Type != "object" {
			t.Errorf("%s: type = %q, want object", file, head.Type)
		}
	}
	check(EnvelopeFile, Envelope())
	for _, name := range CommandNames() {
		raw, ok := Command(name)
		if !ok {
			t.Fatalf("Command(%q) not found", name)
		}
		check(CommandFile(name), raw)
	}
}

func TestCommandAPI(t *testing.T) {
	want := []string{
		"add", "completion", "deploy", "diff", "doctor", "explain", "fetch", "help", "init", "lock",
		"plan", "preview", "remove", "rollback", "schema", "snapshots", "status", "update", "version",
	}
	got := CommandNames()
	if !slices.IsSorted(got) {
		t.Errorf("CommandNames not sorted: %q", got)
	}
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("CommandNames lacks %q", name)
		}
	}
	for _, name := range []string{"", "nope", "../envelope", "commands/plan", "plan.schema"} {
		if _, ok := Command(name); ok {
			t.Errorf("Command(%q) found, want not found", name)
		}
	}
	// Callers get their own copy.
	a := Envelope()
	a[0] = 'X'
	if Envelope()[0] != '{' {
		t.Error("Envelope() shares its bytes with callers")
	}
}

// TestSharedDefsIdentical keeps the definitions that several files repeat
// (each file is self-contained so `schema --json` needs no $ref resolution)
// byte-for-byte equal in meaning.
func TestSharedDefsIdentical(t *testing.T) {
	first := map[string]any{}
	firstFile := map[string]string{}
	for _, name := range CommandNames() {
		raw, _ := Command(name)
		var s struct {
			Defs map[string]any `json:"$defs"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		for _, def := range []string{"change", "diff_change", "summary"} {
			v, ok := s.Defs[def]
			if !ok {
				continue
			}
			if prev, ok := first[def]; ok {
				if !reflect.DeepEqual(prev, v) {
					t.Errorf("$defs.%s differs between %s and %s", def, firstFile[def], name)
				}
				continue
			}
			first[def], firstFile[def] = v, name
		}
	}
	if len(first) != 3 {
		t.Errorf("shared defs found: %v", firstFile)
	}
}

// TestErrorCodesMirrorApperr checks that the envelope schema's list of known
// codes (errors.items.code.examples) matches engine/apperr.
func TestErrorCodesMirrorApperr(t *testing.T) {
	src := filepath.Join("..", "engine", "apperr", "apperr.go")
	f, err := parser.ParseFile(token.NewFileSet(), src, nil, 0)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("engine/apperr not present")
	}
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || spec.Type == nil || !isIdent(spec.Type, "Code") {
			return true
		}
		for _, v := range spec.Values {
			if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				codes = append(codes, s)
			}
		}
		return true
	})
	if len(codes) == 0 {
		t.Fatal("no Code constants found in " + src)
	}
	var env struct {
		Defs struct {
			Error struct {
				Properties struct {
					Code struct {
						Examples []string `json:"examples"`
					} `json:"code"`
				} `json:"properties"`
			} `json:"error"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Envelope(), &env); err != nil {
		t.Fatal(err)
	}
	listed := env.Defs.Error.Properties.Code.Examples
	slices.Sort(codes)
	if !slices.IsSorted(listed) {
		t.Error("envelope.schema.json: error code examples are not sorted")
	}
	if !slices.Equal(codes, listed) {
		t.Errorf("envelope.schema.json error code examples differ from engine/apperr:\n apperr: %q\n schema: %q", codes, listed)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
