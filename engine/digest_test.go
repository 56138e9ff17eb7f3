package engine

import (
	"encoding/json"
	"testing"
)

// TestDigestJSON: a digest is "sha256:<hex>" in JSON, null when there is
// none, decodes back to what it was, and a hash that is not hex (read from
// a damaged manifest) still makes valid JSON.
func TestDigestJSON(t *testing.T) {
	for _, c := range []struct {
		d    Digest
		want string
	}{
		{"", `null`},
		{"0a1b", `"sha256:0a1b"`},
		{`x"y`, `"sha256:x\"y"`},
	} {
		got, err := json.Marshal(c.d)
		if err != nil || string(got) != c.want {
			t.Fatalf("%q: got %s (%v), want %s", c.d, got, err, c.want)
		}
		var back Digest
		if err := json.Unmarshal(got, &back); err != nil || back != c.d {
			t.Fatalf("%s decodes to %q (%v), want %q", got, back, err, c.d)
		}
	}
	var d Digest
	if err := json.Unmarshal([]byte(`"md5:00"`), &d); err == nil {
		t.Fatal("a digest without the sha256: prefix decoded")
	}
}
