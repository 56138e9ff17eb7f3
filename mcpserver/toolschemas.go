package mcpserver

import (
	"bytes"
	"encoding/json"
)

// maxStringArg is the maxLength of every free-text string argument: room
// for any path, URL or id, and small enough that an error quoting the value
// stays small. The server validates calls against it (see [limitStrings]);
// the schemas in tools/list leave it out to keep the list small.
const maxStringArg = 4096

// maxArgumentsBytes caps the JSON text of one call's arguments; a larger
// call is refused before it is validated. Every call its schema accepts
// fits: no tool has more than five free-text strings, and five of
// maxStringArg characters take under 250 KiB even fully \u-escaped.
const maxArgumentsBytes = 256 << 10

// prop is one hand-written JSON Schema property: its name and its schema
// text. Tool input schemas are assembled from these in a fixed order, so the
// bytes served in tools/list are exactly what the snapshots freeze.
type prop struct {
	name   string
	schema string
}

// targetEnum is the target names every schema accepts (SPEC §8).
var targetEnum = []string{"all", "codex", "claude_code", "cursor", "vscode"}

// str, boolean, strList and enum build one argument of that type. desc is a few words
// that the name and type do not already say; "" leaves the description
// out, which keeps tools/list small (SPEC §8: 12 KB with every tool).
func str(name, desc string) prop     { return typed(name, `"type":"string"`, desc) }
func boolean(name, desc string) prop { return typed(name, `"type":"boolean"`, desc) }
func strList(name, desc string) prop {
	return typed(name, `"type":"array","items":{"type":"string"}`, desc)
}
func enum(name string, values ...string) prop {
	v, _ := json.Marshal(values)
	return typed(name, `"type":"string","enum":`+string(v), "")
}

func typed(name, body, desc string) prop {
	if desc != "" {
		d, _ := json.Marshal(desc)
		body += `,"description":` + string(d)
	}
	return prop{name, "{" + body + "}"}
}

// The arguments several tools share.
var (
	pRepo    = str("repo", "")
	pProfile = str("profile", "")
	pTarget  = enum("target", targetEnum...)
	pMachine = str("machine", "")
	pDryRun  = boolean("dry_run", "")
	pYes     = prop{"yes", `{"type":"boolean","const":true}`}
	pDiff    = boolean("diff", "")
	pName    = str("name", "")
)

// requestProps are the arguments of plan, diff and deploy.
var requestProps = []prop{pRepo, pProfile, pTarget, pMachine, pDryRun}

// objectSchema renders {"type":"object","properties":{...},"required":[...],
// "additionalProperties":false} from props, in order.
func objectSchema(props []prop, required ...string) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.name)
		b.Write(name)
		b.WriteByte(':')
		b.WriteString(p.schema)
	}
	b.WriteByte('}')
	if len(required) > 0 {
		req, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(req)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes()
}

// limitStrings returns the schema calls are validated against: the
// advertised one with maxLength maxStringArg on every free-text string
// property (a string without an enum).
func limitStrings(raw json.RawMessage) (json.RawMessage, error) {
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	props, _ := s["properties"].(map[string]any)
	for _, p := range props {
		if p, ok := p.(map[string]any); ok && p["type"] == "string" && p["enum"] == nil && p["maxLength"] == nil {
			p["maxLength"] = maxStringArg
		}
	}
	return json.Marshal(s)
}

func with(base []prop, more ...prop) []prop {
	return append(append([]prop{}, base...), more...)
}

// The input schema of each tool.
var (
	planSchema    = objectSchema(requestProps)
	diffSchema    = objectSchema(requestProps)
	previewSchema = objectSchema(with(requestProps, pDiff))
	statusSchema  = objectSchema(with(requestProps,
		prop{"only", `{"type":"array","items":{"type":"string","enum":["missing","modified","extra","pending"]}}`}))
	deploySchema      = objectSchema(requestProps)
	deployApplySchema = objectSchema([]prop{pRepo, pProfile, pTarget, pMachine, boolean("dry_run", "Plan only."),
		boolean("adopt", "Overwrite unmanaged files."), boolean("force", "Overwrite hand-edited files."),
		str("confirm_token", "From deploy."), pYes}, "yes")
	rollbackSchema = objectSchema([]prop{pRepo, str("to", "Snapshot id."), boolean("last", "Undo the newest snapshot."),
		pTarget, pYes}, "yes")
	snapshotsSchema = objectSchema([]prop{str("id", "")})
	doctorSchema    = objectSchema([]prop{pRepo, pTarget})
	explainSchema   = objectSchema(with(requestProps, enum("kind", "plan", "diff", "status")), "kind")
	resourcesSchema = objectSchema([]prop{enum("action", "list", "read", "search"),
		str("uri", "For read."), str("query", "For search."), pRepo, pProfile}, "action")
)
