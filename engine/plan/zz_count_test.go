package plan

import (
	"os"
	"strings"
	"testing"
)

func TestZZCount(t *testing.T) {
	p := os.Getenv("SC_FILE")
	if p == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(p)
	counts := map[string]int{}
	err := walkStatFile(data, statBaseMagic, func(path []byte, e statEntry) {
		parts := strings.Split(string(path), "/")
		counts[strings.Join(parts[:min(4, len(parts))], "/")]++
	})
	t.Log(err, counts)
}
