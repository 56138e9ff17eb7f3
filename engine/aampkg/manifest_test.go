package aampkg

import (
	"strings"
	"testing"
)

// ParseManifest reports every problem at once, each with its field path
// and YAML line.
func TestParseManifestReportsEveryProblem(t *testing.T) {
	src := "name: Bad_Name\nversion: one\ndescription: \"\"\nartifacts:\n  skills:\n    - name: Review\n      path: ../x\n"
	_, probs, err := ParseManifest([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.String())
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{"name: ", "(line 1)", "version: ", "(line 2)", "description: ", "artifacts.skills[0].name", "artifacts.skills[0].path"} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
	if _, _, err := ParseManifest([]byte("name: [\n")); err == nil || !strings.Contains(err.Error(), "aam.yaml") {
		t.Fatalf("a YAML syntax error: %v", err)
	}
}

// FuzzParseManifest: no input makes the parser panic, and a manifest it
// accepts without problems has a valid name and version.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(testManifest))
	f.Add([]byte("name: x\nversion: 1.0.0\ndescription: d\nartifacts: {skills: [{name: a, path: a}]}\ndependencies: {b: ^1.0.0}\n"))
	f.Add([]byte("name: [\n"))
	f.Add([]byte("artifacts:\n  skills:\n    - name: a\n      path: /etc\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, probs, err := ParseManifest(data)
		if err != nil || len(probs) > 0 {
			return
		}
		if !ValidName(m.Name) || m.Version == "" || m.ArtifactCount() == 0 {
			t.Fatalf("accepted %+v", m)
		}
	})
}
