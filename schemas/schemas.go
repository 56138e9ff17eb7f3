// Package schemas holds the JSON Schemas (draft 2020-12) of agentpack's
// --json envelope and of each command's data.
//
// The schema files are the source of truth for the machine-readable
// contract: `agentpack schema --json` prints them, and every package's tests
// check real output with schematest.Validate. The validator lives in that
// package so that the binary, which only prints the schemas, does not link
// a JSON Schema compiler (whose package init alone cost every command
// 2.5 ms).
package schemas

import (
	"embed"
	"encoding/json"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// BaseURL is the fake base URL the schemas are identified by ($id). Nothing
// is fetched from it: every URL under it is served from the embedded files.
const BaseURL = "https://agentpack.dev/schemas/"

// EnvelopeFile is the name of the envelope's schema among [FS]'s files.
const EnvelopeFile = "envelope.schema.json"

const (
	commandsDir   = "commands"
	commandSuffix = ".schema.json"
)

//go:embed envelope.schema.json commands/*.schema.json
var files embed.FS

// Envelope returns the schema of the --json envelope.
func Envelope() json.RawMessage {
	b, err := files.ReadFile(EnvelopeFile)
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
	b, err := files.ReadFile(CommandFile(name))
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

// FS returns the schema files: [EnvelopeFile] and one [CommandFile] per
// command.
func FS() fs.FS { return files }

// CommandFile returns the name of the named command's data schema among
// [FS]'s files, e.g. "commands/plan.schema.json".
func CommandFile(name string) string {
	return path.Join(commandsDir, name+commandSuffix)
}
