package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// maxStringArg is the maxLength of every free-text string argument: room
// for any path, URL or id, and small enough that an error quoting the value
// stays small.
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

// The shared properties of the core tools.
var (
	pRepo    = prop{"repo", `{"type":"string","description":"Repo dir (default: --repo)."}`}
	pProfile = prop{"profile", `{"type":"string","description":"Profile (default: server's or default)."}`}
	pTarget  = prop{"target", `{"type":"string","enum":["all","codex","claude_code","cursor","vscode"],"description":"Target (default: server's or all)."}`}
	pMachine = prop{"machine", `{"type":"string","description":"Machine id."}`}
	pDryRun  = prop{"dry_run", `{"type":"boolean","description":"Ignored; never writes."}`}
	pYes     = prop{"yes", `{"type":"boolean","const":true,"description":"Must be true: confirms the write."}`}
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
		b.WriteString(limitString(p.schema))
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

// limitString gives a free-text string property (a string schema without
// an enum) the maxLength every such argument has, so clients see the limit
// and the server's validation enforces it.
func limitString(schema string) string {
	const head = `{"type":"string",`
	if !strings.HasPrefix(schema, head) || strings.Contains(schema, `"enum"`) || strings.Contains(schema, `"maxLength"`) {
		return schema
	}
	return head + `"maxLength":` + strconv.Itoa(maxStringArg) + "," + strings.TrimPrefix(schema, head)
}

func with(base []prop, more ...prop) []prop {
	return append(append([]prop{}, base...), more...)
}

// The input schema of each tool.
var (
	planSchema    = objectSchema(requestProps)
	diffSchema    = objectSchema(requestProps)
	previewSchema = objectSchema(with(requestProps,
		prop{"diff", `{"type":"boolean","description":"Add per-file unified diffs."}`}))
	statusSchema = objectSchema(with(requestProps,
		prop{"only", `{"type":"array","items":{"type":"string","enum":["missing","modified","extra","pending"]},"description":"Only these drift kinds."}`}))
	deploySchema      = objectSchema(requestProps)
	deployApplySchema = objectSchema(with([]prop{pRepo, pProfile, pTarget, pMachine,
		{"dry_run", `{"type":"boolean","description":"Only plan; write nothing."}`}},
		prop{"adopt", `{"type":"boolean","description":"Allow overwriting unmanaged files (snapshotted)."}`},
		prop{"force", `{"type":"boolean","description":"Allow overwriting hand-edited managed files (snapshotted)."}`},
		prop{"confirm_token", `{"type":"string","description":"Token from deploy for this repo/profile/target/machine."}`},
		pYes), "yes")
	rollbackSchema = objectSchema([]prop{
		pRepo,
		{"to", `{"type":"string","description":"Snapshot id to return to (unless last=true)."}`},
		{"last", `{"type":"boolean","description":"Undo the newest snapshot instead."}`},
		{"target", `{"type":"string","enum":["all","codex","claude_code","cursor","vscode"],"description":"Only this target (default: all)."}`},
		pYes,
	}, "yes")
	snapshotsSchema = objectSchema([]prop{
		{"id", `{"type":"string","description":"Show this snapshot instead of listing all."}`},
	})
	doctorSchema  = objectSchema([]prop{pRepo, pTarget})
	explainSchema = objectSchema(with(requestProps,
		prop{"kind", `{"type":"string","enum":["plan","diff","status"],"description":"Explain the plan, the diff or status drift."}`}), "kind")
	resourcesSchema = objectSchema([]prop{
		{"action", `{"type":"string","enum":["list","read","search"],"description":"list, read a uri, or search."}`},
		{"uri", `{"type":"string","description":"URI to read, e.g. agentpack://manifest."}`},
		{"query", `{"type":"string","description":"Text to find in module ids, names, contents."}`},
		pRepo, pProfile,
	}, "action")
)
