package target

import (
	"sort"
	"strings"

	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/checksum"
)

// KeyedFile is the desired content of a shared config file that agentpack
// owns key by key: the entries it wants under Container, and nothing about
// the rest of the file, which stays the user's.
type KeyedFile struct {
	// Format is the file's syntax: "json" (JSON or JSONC) or "toml".
	Format cfgedit.Format
	// Container is the path of the object holding the entries, e.g.
	// ["mcpServers"] (JSON) or ["mcp_servers"] (TOML).
	Container []string
	// Entries are the entries wanted, sorted by Name.
	Entries []KeyedEntry
}

// KeyedEntry is one entry of a [KeyedFile]: its name in the container and
// its value (plain strings, string lists and string maps).
type KeyedEntry struct {
	Name      string
	Value     any
	ModuleIDs []string
}

// Canonical is the entry's canonical JSON, whose sha256 the target manifest
// records.
func (e KeyedEntry) Canonical() []byte {
	b, err := cfgedit.Canonical(e.Value)
	if err != nil {
		return nil // values are built by adapters from strings: cannot fail
	}
	return b
}

// Entry returns the entry called name, or nil.
func (k *KeyedFile) Entry(name string) *KeyedEntry {
	for i := range k.Entries {
		if k.Entries[i].Name == name {
			return &k.Entries[i]
		}
	}
	return nil
}

// Hashes maps each entry name to the sha256 of its canonical JSON.
func (k *KeyedFile) Hashes() map[string]string {
	out := make(map[string]string, len(k.Entries))
	for _, e := range k.Entries {
		out[e.Name] = checksum.SHA256Hex(e.Canonical())
	}
	return out
}

// EntriesSHA256 is the sha256 a target manifest records for a key-level
// file: a digest of the owned entries' names and hashes (a missing entry
// counts with the hash ""), so it changes when an owned entry changes and
// never when the rest of the file does.
func EntriesSHA256(hashes map[string]string) string {
	names := make([]string, 0, len(hashes))
	for n := range hashes {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("agentpack-entries-v1\n")
	for _, n := range names {
		b.WriteString(n + "\x00" + hashes[n] + "\n")
	}
	return checksum.SHA256Hex([]byte(b.String()))
}
