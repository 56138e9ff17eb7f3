package mcpserver

import (
	"bytes"
	"encoding/json"
)

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
	pRepo    = prop{"repo", `{"type":"string","description":"Repo folder (default: server's --repo)."}`}
	pProfile = prop{"profile", `{"type":"string","description":"Profile (default: server's, else default)."}`}
	pTarget  = prop{"target", `{"type":"string","enum":["all","codex","claude_code","cursor","vscode"],"description":"Target (default: server's, else all)."}`}
	pMachine = prop{"machine", `{"type":"string","description":"Machine id."}`}
	pDryRun  = prop{"dry_run", `{"type":"boolean","description":"No effect here; never writes."}`}
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

func with(base []prop, more ...prop) []prop {
	return append(append([]prop{}, base...), more...)
}

// The input schema of each tool.
var (
	planSchema    = objectSchema(requestProps)
	diffSchema    = objectSchema(requestProps)
	previewSchema = objectSchema(with(requestProps,
		prop{"diff", `{"type":"boolean","description":"Include per-file unified diffs."}`}))
	statusSchema = objectSchema(with(requestProps,
		prop{"only", `{"type":"array","items":{"type":"string","enum":["missing","modified","extra","pending"]},"description":"Only report these drift kinds."}`}))
	deploySchema      = objectSchema(requestProps)
	deployApplySchema = objectSchema(with([]prop{pRepo, pProfile, pTarget, pMachine,
		{"dry_run", `{"type":"boolean","description":"Only show the plan; writes nothing."}`}},
		prop{"adopt", `{"type":"boolean","description":"Allow overwriting unmanaged files (saved in the snapshot)."}`},
		prop{"force", `{"type":"boolean","description":"Allow overwriting hand-edited managed files (saved in the snapshot)."}`},
		prop{"confirm_token", `{"type":"string","description":"Token from a deploy call with the same repo/profile/target/machine."}`},
		pYes), "yes")
	rollbackSchema = objectSchema([]prop{
		pRepo,
		{"to", `{"type":"string","description":"Snapshot id to return to (required unless last is true)."}`},
		{"last", `{"type":"boolean","description":"Undo the newest snapshot instead."}`},
		{"target", `{"type":"string","enum":["all","codex","claude_code","cursor","vscode"],"description":"Only this target (default: all)."}`},
		pYes,
	}, "yes")
	snapshotsSchema = objectSchema([]prop{
		{"id", `{"type":"string","description":"Show this snapshot's files instead of listing all snapshots."}`},
	})
	doctorSchema  = objectSchema([]prop{pRepo, pTarget})
	explainSchema = objectSchema(with(requestProps,
		prop{"kind", `{"type":"string","enum":["plan","diff","status"],"description":"What to explain: the plan, the diff or status drift."}`}), "kind")
	resourcesSchema = objectSchema([]prop{
		{"action", `{"type":"string","enum":["list","read","search"],"description":"list, read a uri, or search module files."}`},
		{"uri", `{"type":"string","description":"URI to read, e.g. agentpack://manifest."}`},
		{"query", `{"type":"string","description":"Text to find in module ids, names and contents."}`},
		pRepo, pProfile,
	}, "action")
)
