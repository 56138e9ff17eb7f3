package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
)

// maxSearchMatches caps the matches of one search.
const maxSearchMatches = 50

// ResourceText is the data of `resources` with action read. A module file
// that is not text has Encoding "base64" and its bytes base64 in Text.
type ResourceText struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mime_type"`
	Text     string `json:"text"`
	Encoding string `json:"encoding,omitempty"`
}

// SearchMatch is one hit of `resources` with action search; Line is 0 when
// the module id or file name matched.
type SearchMatch struct {
	URI      string `json:"uri"`
	ModuleID string `json:"module_id"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Text     string `json:"text"`
}

// runResources serves the same data as MCP resources through a tool, for
// clients that only speak tools.
func runResources(ctx context.Context, c *call) *envelope.Envelope {
	a := c.args
	env := envelope.New("resources", "resources "+a.Action)
	switch a.Action {
	case "list":
		// A repo that does not load still has the fixed resources.
		list, err := listResources(ctx, c.eng, c.req)
		var warnings []string
		if err != nil {
			ae := apperr.As(err)
			warnings = []string{"module files not listed: [" + string(ae.Code) + "] " + ae.Message}
		}
		return env.Succeed(map[string]any{"resources": list}, warnings)
	case "read":
		if a.URI == "" {
			return env.Fail(missingArg("uri", "read"), nil)
		}
		got, err := readResource(ctx, c.eng, c.req, a.URI)
		if err != nil {
			return env.Fail(err, nil)
		}
		text, encoding := got.toolText()
		return env.Succeed(ResourceText{URI: got.URI, MIMEType: got.MIMEType, Text: text, Encoding: encoding}, nil)
	default: // search; the schema's enum allows nothing else
		if strings.TrimSpace(a.Query) == "" {
			return env.Fail(missingArg("query", "search"), nil)
		}
		files, err := moduleFiles(ctx, c.eng, c.req)
		if err != nil {
			return env.Fail(err, nil)
		}
		matches, truncated := search(files, a.Query)
		var warnings []string
		if truncated {
			warnings = []string{"search stopped after 50 matches; narrow the query"}
		}
		return env.Succeed(map[string]any{"query": a.Query, "matches": matches}, warnings)
	}
}

func missingArg(name, action string) error {
	return apperr.New(apperr.InvalidArgument, "invalid argument %q: required with action=%s", name, action).
		WithHint("pass %s", name).With("property", name).
		With("reason_code", "invalid_argument").With("next_actions", []string{"fix_arguments"})
}

// search finds query (case-insensitively) in module ids, file names and
// text lines.
func search(files []moduleFile, query string) ([]SearchMatch, bool) {
	q := strings.ToLower(query)
	out := []SearchMatch{}
	add := func(f moduleFile, line int, text string) bool {
		if len(out) == maxSearchMatches {
			return false
		}
		if len(text) > 200 {
			text = text[:200]
		}
		out = append(out, SearchMatch{URI: moduleURI(f.module.ID, f.file), ModuleID: f.module.ID, File: f.file, Line: line, Text: text})
		return true
	}
	for _, f := range files {
		if strings.Contains(strings.ToLower(f.module.ID+"/"+f.file), q) && !add(f, 0, f.module.ID+"/"+f.file) {
			return out, true
		}
		if isBinary(f.data) {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(f.data))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if strings.Contains(strings.ToLower(sc.Text()), q) && !add(f, n, strings.TrimSpace(sc.Text())) {
				return out, true
			}
		}
	}
	return out, false
}
