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
	pRepo    = prop{"repo", `{"type":"string","description":"Desired-state repo folder (default: the server's --repo)."}`}
	pProfile = prop{"profile", `{"type":"string","description":"Profile to use (default: the server's --profile, else default)."}`}
	pTarget  = prop{"target", `{"type":"string","enum":["all","codex","claude_code","cursor","vscode"],"description":"Target to act on (default: the server's --target, else all)."}`}
	pMachine = prop{"machine", `{"type":"string","description":"Machine id for machine-specific state."}`}
	pDryRun  = prop{"dry_run", `{"type":"boolean","description":"Accepted for CLI parity; this tool never writes."}`}
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
		{"dry_run", `{"type":"boolean","description":"Only show the plan, like deploy --apply --dry-run; writes nothing."}`}},
		prop{"adopt", `{"type":"boolean","description":"Allow overwriting files agentpack does not manage yet (saved in the snapshot)."}`},
		prop{"force", `{"type":"boolean","description":"Allow overwriting managed files edited since the last deploy (saved in the snapshot)."}`},
		prop{"confirm_token", `{"type":"string","description":"confirm_token returned by the deploy tool for the same repo/profile/target/machine."}`},
		pYes), "yes")
	rollbackSchema = objectSchema([]prop{
		pRepo,
		{"to", `{"type":"string","description":"Snapshot id to return to (required unless last is true)."}`},
		{"last", `{"type":"boolean","description":"Undo the newest snapshot instead of giving to."}`},
		{"target", `{"type":"string","enum":["all","codex","claude_code","cursor","vscode"],"description":"Only roll back this target (default: all)."}`},
		pYes,
	}, "yes")
	snapshotsSchema = objectSchema([]prop{
		{"id", `{"type":"string","description":"Show this snapshot's files instead of listing all snapshots."}`},
	})
	doctorSchema  = objectSchema([]prop{pRepo, pTarget})
	explainSchema = objectSchema(with(requestProps,
		prop{"kind", `{"type":"string","enum":["plan","diff","status"],"description":"What to explain: the plan, the diff or status drift."}`}), "kind")
	resourcesSchema = objectSchema([]prop{
		{"action", `{"type":"string","enum":["list","read","search"],"description":"list resources, read one uri, or search module files for query."}`},
		{"uri", `{"type":"string","description":"Resource URI to read, e.g. agentpack://manifest or agentpack://modules/<id>/<file>."}`},
		{"query", `{"type":"string","description":"Case-insensitive text to search for in module ids, file names and contents."}`},
		pRepo, pProfile,
	}, "action")
)
