// Package schematest validates --json documents against the schemas in
// package schemas. Tests use it; the agentpack binary does not link it, so
// the JSON Schema compiler's package init (which compiles every draft's
// meta-schema) costs no command anything.
package schematest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentpack/agentpack/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one violation: the JSON pointer (RFC 6901, from the document
// root, "" for the root itself) of the value that failed, and why.
type Problem struct {
	Pointer string
	Message string
}

// String renders the problem as "<pointer>: <message>", with "/" standing
// for the root.
func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "/"
	}
	return ptr + ": " + p.Message
}

// ValidationError is the error [Validate] returns for a document that does
// not match its schemas.
type ValidationError struct {
	// Schema is the file that rejected the document, e.g.
	// "envelope.schema.json" or "commands/plan.schema.json" ([schemas.FS]).
	Schema   string
	Problems []Problem
}

// Error implements error.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("schemas: document does not match %s: %s", e.Schema, strings.Join(parts, "; "))
}

// Validate checks one envelope document: against the envelope schema, and
// when ok is true, its data against the schema of its command. A command
// without a data schema is an error. The returned error is a
// *[ValidationError] whose problems name the JSON pointers that failed,
// or a plain error when the schemas themselves do not compile.
func Validate(doc []byte) error {
	set := compiledSchemas()
	if set.err != nil {
		return set.err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return &ValidationError{Schema: schemas.EnvelopeFile, Problems: []Problem{{Message: "not one JSON document: " + err.Error()}}}
	}
	if err := set.envelope.Validate(v); err != nil {
		return newValidationError(schemas.EnvelopeFile, "", err)
	}
	env := v.(map[string]any) // the envelope schema guarantees an object
	if env["ok"] != true {
		return nil
	}
	name := env["command"].(string)
	sch, found := set.commands[name]
	if !found {
		return &ValidationError{Schema: schemas.EnvelopeFile, Problems: []Problem{{
			Pointer: "/command",
			Message: fmt.Sprintf("no data schema for command %q (add schemas/commands/%s.schema.json)", name, name),
		}}}
	}
	if err := sch.Validate(env["data"]); err != nil {
		return newValidationError(schemas.CommandFile(name), "/data", err)
	}
	return nil
}

var printer = message.NewPrinter(language.English)

// newValidationError flattens a jsonschema error tree into its leaf
// problems, with pointers prefixed by prefix (the location of the validated
// value in the whole document).
func newValidationError(schema, prefix string, err error) error {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return fmt.Errorf("schemas: validate against %s: %w", schema, err)
	}
	out := &ValidationError{Schema: schema}
	collect(verr, prefix, &out.Problems)
	if len(out.Problems) == 0 { // defensive: a failure must always carry a reason
		out.Problems = []Problem{{Pointer: prefix, Message: verr.Error()}}
	}
	return out
}

func collect(e *jsonschema.ValidationError, prefix string, out *[]Problem) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, prefix, out)
		}
		return
	}
	at := prefix + pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		// Point at the missing property itself, one problem each.
		for _, name := range k.Missing {
			*out = append(*out, Problem{Pointer: at + "/" + escape(name), Message: "required property is missing"})
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			*out = append(*out, Problem{Pointer: at + "/" + escape(name), Message: "property is not allowed"})
		}
	case *kind.FalseSchema:
		*out = append(*out, Problem{Pointer: at, Message: "property is not allowed here"})
	default:
		*out = append(*out, Problem{Pointer: at, Message: e.ErrorKind.LocalizedString(printer)})
	}
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

// pointerEscaper encodes one RFC 6901 reference token.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func escape(token string) string { return pointerEscaper.Replace(token) }

// compiled holds every schema, compiled once.
type compiled struct {
	envelope *jsonschema.Schema
	commands map[string]*jsonschema.Schema
	err      error
}

var (
	compileOnce sync.Once
	schemaSet   compiled
)

// compiledSchemas compiles the envelope and every command schema on first
// use. A schema that does not compile is a bug in package schemas; it is
// reported by every later Validate call and by this package's tests.
func compiledSchemas() *compiled {
	compileOnce.Do(func() { schemaSet = compileAll() })
	return &schemaSet
}

func compileAll() compiled {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{"https": embeddedLoader{}})

	env, err := c.Compile(schemas.BaseURL + schemas.EnvelopeFile)
	if err != nil {
		return compiled{err: fmt.Errorf("schemas: compile %s: %w", schemas.EnvelopeFile, err)}
	}
	cmds := map[string]*jsonschema.Schema{}
	for _, name := range schemas.CommandNames() {
		sch, err := c.Compile(schemas.BaseURL + schemas.CommandFile(name))
		if err != nil {
			return compiled{err: fmt.Errorf("schemas: compile %s: %w", schemas.CommandFile(name), err)}
		}
		cmds[name] = sch
	}
	return compiled{envelope: env, commands: cmds}
}

// embeddedLoader serves URLs under schemas.BaseURL from the embedded files
// and refuses every other URL, so compiling never touches the network. The
// draft meta-schemas are built into jsonschema and never reach it.
type embeddedLoader struct{}

// Load implements jsonschema.URLLoader.
func (embeddedLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, schemas.BaseURL)
	if !ok {
		return nil, fmt.Errorf("schemas: refusing to load %s: only %s* is served", url, schemas.BaseURL)
	}
	f, err := schemas.FS().Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jsonschema.UnmarshalJSON(f)
}
