package registry

import (
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
