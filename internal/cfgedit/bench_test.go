package cfgedit

import (
	"fmt"
	"strings"
	"testing"
)

// bigClaudeJSON is a ~1 MB ~/.claude.json: many projects with history.
func bigClaudeJSON() []byte {
	var b strings.Builder
	b.WriteString("{\n  \"projects\": {\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "    \"/work/p%d\": {\"allowedTools\": [], \"history\": [{\"display\": \"%s\"}]},\n", i, strings.Repeat("x", 400))
	}
	b.WriteString("    \"last\": {}\n  },\n  \"mcpServers\": {\"theirs\": {\"command\": \"x\"}}\n}\n")
	return []byte(b.String())
}

func BenchmarkJSONEntriesLargeFile(b *testing.B) {
	doc := bigClaudeJSON()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := JSONEntries(doc, []string{"mcpServers"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONSetLargeFile(b *testing.B) {
	doc := bigClaudeJSON()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := Set(JSON, doc, []string{"mcpServers"}, "ours", server); err != nil {
			b.Fatal(err)
		}
	}
}
