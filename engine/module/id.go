package module

import (
	"fmt"
	"strings"
)

// MaxNameBytes bounds the name part of a module id. Targets deploy a
// module as a folder or file named after it, the longest with
// ".instructions.md" appended, and most file systems refuse a file name
// over 255 bytes; a longer name would be accepted until deploy.
const MaxNameBytes = 255 - len(".instructions.md")

// IDHint is the rule [ValidateID] enforces, for error hints.
var IDHint = fmt.Sprintf("a module id is `<type>:<name>` whose prefix is the module's own type (`skill:review` for a skill); "+
	"the name uses only ASCII letters, digits, `.`, `-` and `_`, neither starts nor ends with `.`, has no `..` "+
	"and is at most %d bytes", MaxNameBytes)

// ValidateID checks that id is `<type>:<name>` with t as its prefix and a
// name that is one portable path element: ASCII letters, digits, '.', '-'
// and '_', no leading or trailing '.', no "..", at most [MaxNameBytes]
// bytes. Such a name is its own [SafeName], so two valid ids of one type
// deploy to the same place only when their names differ in case alone.
func ValidateID(id string, t Type) error {
	prefix, name, ok := strings.Cut(id, ":")
	switch {
	case !ok:
		return fmt.Errorf("has no `<type>:` prefix")
	case prefix == "":
		return fmt.Errorf("has an empty type before ':'")
	case Type(prefix) != t:
		return fmt.Errorf("starts with %q but the module's type is %q (use %q)", prefix+":", t, string(t)+":"+name)
	case name == "":
		return fmt.Errorf("has an empty name after ':'")
	case len(name) > MaxNameBytes:
		return fmt.Errorf("has a name of %d bytes (at most %d)", len(name), MaxNameBytes)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("has a name starting with '.'")
	case strings.HasSuffix(name, "."):
		return fmt.Errorf("has a name ending with '.'")
	case strings.Contains(name, ".."):
		return fmt.Errorf("has \"..\" in its name")
	}
	for _, r := range name {
		if !portableRune(r) {
			return fmt.Errorf("has %q in its name (only ASCII letters, digits, '.', '-' and '_')", r)
		}
	}
	return nil
}

func portableRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_'
}
