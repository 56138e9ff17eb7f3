// Package schemas holds the JSON Schemas (draft 2020-12) of agentpack's
// --json envelope and of each command's data, and validates documents
// against them.
//
// The schema files are the source of truth for the machine-readable
// contract: `agentpack schema --json` prints them, and every package's tests
// check real output with [Validate].
package schemas

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// BaseURL is the fake base URL the schemas are identified by ($id). Nothing
// is fetched from it: every URL under it is served from the embedded files.
const BaseURL = "https://agentpack.dev/schemas/"

const (
	envelopeFile  = "envelope.schema.json"
	commandsDir   = "commands"
	commandSuffix = ".schema.json"
)

//go:embed envelope.schema.json commands/*.schema.json
var files embed.FS

// Envelope returns the schema of the --json envelope.
func Envelope() json.RawMessage {
	b, err := files.ReadFile(envelopeFile)
	if err != nil {
		panic("schemas: envelope schema not embedded: " + err.Error())
	}
	return b
}

// Command returns the schema of the data of the named top-level command
// (e.g. "plan"), and false when there is none.
func Command(name string) (json.RawMessage, bool) {
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return nil, false
	}
	b, err := files.ReadFile(commandFile(name))
	if err != nil {
		return nil, false
	}
	return b, true
}

// CommandNames returns, sorted, the names of the commands that have a data
// schema.
func CommandNames() []string {
	entries, err := files.ReadDir(commandsDir)
	if err != nil {
		panic("schemas: commands not embedded: " + err.Error())
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), commandSuffix); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func commandFile(name string) string {
	return path.Join(commandsDir, name+commandSuffix)
}

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
// use. A schema that does not compile is a bug in this package; it is
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

	env, err := c.Compile(BaseURL + envelopeFile)
	if err != nil {
		return compiled{err: fmt.Errorf("schemas: compile %s: %w", envelopeFile, err)}
	}
	cmds := map[string]*jsonschema.Schema{}
	for _, name := range CommandNames() {
		sch, err := c.Compile(BaseURL + commandFile(name))
		if err != nil {
			return compiled{err: fmt.Errorf("schemas: compile %s: %w", commandFile(name), err)}
		}
		cmds[name] = sch
	}
	return compiled{envelope: env, commands: cmds}
}

// embeddedLoader serves URLs under BaseURL from the embedded files and
// refuses every other URL, so compiling never touches the network. The
// draft meta-schemas are built into jsonschema and never reach it.
type embeddedLoader struct{}

// Load implements jsonschema.URLLoader.
func (embeddedLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, BaseURL)
	if !ok {
		return nil, fmt.Errorf("schemas: refusing to load %s: only %s* is served", url, BaseURL)
	}
	f, err := files.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jsonschema.UnmarshalJSON(f)
}
