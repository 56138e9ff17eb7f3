package registry

import (
	"sort"
	"strings"
)

// Scored is a hit with its registry and score.
type Scored struct {
	Hit
	Registry string `json:"registry"`
	Score    int    `json:"score"`
}

// Score rates how well h matches query (lower case): exact name 100, name
// prefix 80, name contains 60, a keyword 50, the description 30, else 0.
// A scoped name also matches on its part after the scope.
func Score(h Hit, query string) int {
	name := strings.ToLower(h.Name)
	bare := name
	if i := strings.Index(name, "/"); i >= 0 {
		bare = name[i+1:]
	}
	switch {
	case query == "":
		return 30
	case name == query || bare == query:
		return 100
	case strings.HasPrefix(name, query) || strings.HasPrefix(bare, query):
		return 80
	case strings.Contains(name, query):
		return 60
	}
	for _, k := range h.Keywords {
		if strings.Contains(strings.ToLower(k), query) {
			return 50
		}
	}
	if strings.Contains(strings.ToLower(h.Description), query) {
		return 30
	}
	return 0
}

// Rank scores hits (from registry reg, in order) against query, keeps those
// that match and carry artifact type typ ("" any), best first and by name,
// the first of each name winning.
func Rank(hits []Scored, query, typ string) []Scored {
	query = strings.ToLower(strings.TrimSpace(query))
	seen := map[string]bool{}
	var out []Scored
	for _, h := range hits {
		if seen[h.Name] {
			continue
		}
		if typ != "" && !HasType(h.ArtifactTypes, typ) {
			continue
		}
		if h.Score = Score(h.Hit, query); h.Score > 0 {
			seen[h.Name] = true
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// HasType reports whether types holds typ ("skill" and "skills" alike).
func HasType(types []string, typ string) bool {
	typ = strings.TrimSuffix(typ, "s")
	for _, t := range types {
		if strings.TrimSuffix(t, "s") == typ {
			return true
		}
	}
	return false
}

// Suggest returns up to 5 names close to query (edit distance ≤ 3, or
// sharing a 3-letter prefix), closest first.
func Suggest(names []string, query string) []string {
	query = strings.ToLower(query)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		bare := strings.ToLower(n)
		if i := strings.Index(bare, "/"); i >= 0 {
			bare = bare[i+1:]
		}
		d := distance(bare, query)
		if d <= 3 || (len(query) >= 3 && strings.HasPrefix(bare, query[:3])) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	out := []string{}
	for i := 0; i < len(cs) && i < 5; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
