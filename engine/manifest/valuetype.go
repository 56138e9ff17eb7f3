package manifest

import (
	"fmt"

	"github.com/agentpack/agentpack/internal/apperr"
	"go.yaml.in/yaml/v3"
)

// valueType is what the value of a known key must be. A wrong type is
// E_CONFIG_INVALID naming the key's path, the expected type, the type found
// and the line, before yaml's decode can fail with Go type names.
type valueType struct {
	name    string // for details.expected: "list of strings"
	a       string // for the message: "a list of strings"
	example string // for the hint: "[base, work]"
	// ok reports whether n, not null and not an alias, decodes as this type.
	ok func(n *yaml.Node) bool
}

var (
	typeString  = valueType{"string", "a string", `"text"`, func(n *yaml.Node) bool { return decodes[string](n) }}
	typeBool    = valueType{"boolean", "a boolean (true or false)", "true", func(n *yaml.Node) bool { return decodes[bool](n) }}
	typeInt     = valueType{"integer", "an integer", "1", func(n *yaml.Node) bool { return n.ShortTag() == "!!int" && decodes[int](n) }}
	typeMapping = valueType{"mapping", "a mapping", "{key: value}", func(n *yaml.Node) bool { return n.Kind == yaml.MappingNode }}
	typeStrings = valueType{"list of strings", "a list of strings", "[base, work]", func(n *yaml.Node) bool { return n.Kind == yaml.SequenceNode }}
)

// topLevelTypes gives the type of each top-level key, for messages; checkKeys
// checks the shape of the objects itself, null included.
var topLevelTypes = map[string]valueType{
	"version":  typeInt,
	"profiles": {name: "mapping", a: "a mapping of profiles", example: "default: {include_tags: [base]}"},
	"targets":  {name: "mapping", a: "a mapping of targets", example: "codex: {scope: both}"},
	"modules":  {name: "list", a: "a list of modules", example: "- id: skill:review"},
	"sources":  {name: "list", a: "a list of sources", example: "- {name: team, url: https://example.com/skills.git}"},
	"packages": {name: "list", a: "a list of packages", example: `- {name: "@acme/kit", version: "^1.0.0"}`},
}

// keyTypes gives the type of each known leaf key; keys absent here (source
// and its children) are objects that checkObject walks.
var keyTypes = map[string]map[string]valueType{
	"profile":    {"include_tags": typeStrings, "include_modules": typeStrings, "exclude_modules": typeStrings},
	"target":     {"mode": typeString, "scope": typeString, "options": typeMapping},
	"module":     {"id": typeString, "type": typeString, "enabled": typeBool, "tags": typeStrings, "targets": typeStrings, "metadata": typeMapping},
	"local_path": {"path": typeString},
	"git":        {"url": typeString, "ref": typeString, "subdir": typeString, "shallow": typeBool},
	"package":    {"name": typeString, "version": typeString, "artifact": typeString, "registry": typeString},
	"artifact":   {"name": typeString, "url": typeString, "ref": typeString, "path": typeString, "commit": typeString},
	"pkgentry":   {"name": typeString, "version": typeString, "tags": typeStrings, "targets": typeStrings, "artifacts": typeStrings},
}

func decodes[T any](n *yaml.Node) bool {
	var v T
	return n.Kind == yaml.ScalarNode && n.Decode(&v) == nil
}

// checkValue checks the value v of the key at path (modules[2].tags). Null
// is an absent value, so it passes; an alias is checked as what it names.
func checkValue(v *yaml.Node, t valueType, path string) error {
	n := v
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if isNull(n) {
		return nil
	}
	if !t.ok(n) {
		return typeErr(v, n, t, path)
	}
	if t.name == typeStrings.name {
		for i, item := range n.Content {
			if err := checkValue(item, typeString, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// typeErr is the error for the value n of the key at path, which is not t;
// at is where the value is written (the alias, when n is what it names).
func typeErr(at, n *yaml.Node, t valueType, path string) *apperr.Error {
	gotName, gotA := describe(n)
	return apperr.New(apperr.ConfigInvalid, "%s: expected %s, got %s (line %d)", path, t.a, gotA, at.Line).
		WithHint("make %s %s, like `%s`", path, t.a, t.example).
		With("key", path).With("line", at.Line).With("expected", t.name).With("got", gotName)
}

// describe names the type of n, short (for details) and with an article.
func describe(n *yaml.Node) (string, string) {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping", "a mapping"
	case yaml.SequenceNode:
		return "list", "a list"
	case yaml.AliasNode:
		return "alias", "an alias (*" + n.Value + ")"
	}
	switch n.ShortTag() {
	case "!!str":
		return "string", "a string"
	case "!!int":
		return "integer", "an integer"
	case "!!float":
		return "number", "a number"
	case "!!bool":
		return "boolean", "a boolean"
	case "!!null":
		return "null", "null"
	case "!!timestamp":
		return "timestamp", "a timestamp"
	}
	return "scalar", "a scalar"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
