package mcpserver

import (
	"net/url"
	"strings"

	"github.com/agentpack/agentpack/engine/skillset"
)

// skillScheme prefixes every skill resource URI.
const skillScheme = "skill://"

func isSkillURI(uri string) bool { return strings.HasPrefix(uri, skillScheme) }

// skillURI is the URI of file (empty: the folder itself) of the skill or
// folder at path, each segment escaped.
func skillURI(path, file string) string {
	p := path
	if file != "" {
		p += "/" + file
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return skillScheme + strings.Join(segs, "/")
}

// parseSkillURI turns skill://<path> into a clean '/'-separated path.
// Each segment is percent-decoded on its own, then refused when it is "",
// "." or "..", or holds a separator or NUL: so ../, %2e%2e/ and an escaped
// %2F all fail, like a traversal in any other resource URI.
func parseSkillURI(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if !ok {
		return "", skillURIError(uri, "not a skill:// URI")
	}
	if strings.ContainsAny(rest, "?#") {
		return "", skillURIError(uri, "query and fragment are not allowed")
	}
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		dec, err := url.PathUnescape(seg)
		switch {
		case err != nil:
			return "", skillURIError(uri, "bad percent-escape")
		case dec == "." || dec == "..":
			return "", skillURIError(uri, "path traversal is not allowed")
		case dec == "":
			return "", skillURIError(uri, "empty path segment")
		case strings.ContainsAny(dec, "/\\\x00"):
			return "", skillURIError(uri, "a segment may not hold a separator or NUL")
		}
		segs[i] = dec
	}
	return strings.Join(segs, "/"), nil
}

// cutSkillFile splits "<skill path>/SKILL.md" into the skill path.
func cutSkillFile(p string) (string, bool) {
	dir, ok := strings.CutSuffix(p, "/"+skillset.SkillFile)
	return dir, ok && dir != ""
}
