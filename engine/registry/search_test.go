package registry

import (
	"fmt"
	"reflect"
	"testing"
)

func TestRankTiersAndTypes(t *testing.T) {
	hits := []Scored{
		{Hit: Hit{Name: "@acme/review", ArtifactTypes: []string{"skill"}}, Registry: "a"},
		{Hit: Hit{Name: "review-kit", ArtifactTypes: []string{"skill", "prompt"}}, Registry: "a"},
		{Hit: Hit{Name: "code-review-tools", ArtifactTypes: []string{"agent"}}, Registry: "a"},
		{Hit: Hit{Name: "lint", Keywords: []string{"review"}, ArtifactTypes: []string{"skill"}}, Registry: "a"},
		{Hit: Hit{Name: "docs", Description: "Helps review docs", ArtifactTypes: []string{"instructions"}}, Registry: "a"},
		{Hit: Hit{Name: "review", ArtifactTypes: []string{"skill"}}, Registry: "b"},
		{Hit: Hit{Name: "unrelated"}, Registry: "a"},
	}
	var got []string
	var scores []int
	for _, h := range Rank(hits, "Review", "") {
		got = append(got, h.Name)
		scores = append(scores, h.Score)
	}
	want := []string{"@acme/review", "review", "review-kit", "code-review-tools", "lint", "docs"}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(scores, []int{100, 100, 80, 60, 50, 30}) {
		t.Fatalf("Rank = %v %v", got, scores)
	}
	if r := Rank(hits, "review", "prompt"); len(r) != 1 || r[0].Name != "review-kit" {
		t.Fatalf("type filter: %+v", r)
	}
	if s := Suggest([]string{"review-kit", "reviwe", "zzz"}, "revew"); len(s) == 0 || s[0] != "reviwe" {
		t.Fatalf("Suggest = %v", s)
	}
}

// BenchmarkRank10k scores and ranks 10,000 index entries, and suggests
// names for a query nothing matches: the part of search after the index
// is read (engine's BenchmarkSearch10k measures the whole command).
func BenchmarkRank10k(b *testing.B) {
	words := []string{"review", "lint", "test", "deploy", "docs", "python", "go", "security"}
	hits := make([]Scored, 0, 10000)
	names := make([]string, 0, 10000)
	for i := 0; i < 10000; i++ {
		w := words[i%len(words)]
		h := Hit{Name: fmt.Sprintf("@team%02d/%s-kit-%05d", i%50, w, i), Description: "Helpers for " + words[(i/8)%len(words)] + " work.",
			Keywords: []string{w, words[(i+3)%len(words)]}, ArtifactTypes: []string{"skills"}}
		hits = append(hits, Scored{Hit: h, Registry: "bench"})
		names = append(names, h.Name)
	}
	for b.Loop() {
		if len(Rank(hits, "review", "")) == 0 || len(Suggest(names, "securty")) == 0 {
			b.Fatal("no results")
		}
	}
}
