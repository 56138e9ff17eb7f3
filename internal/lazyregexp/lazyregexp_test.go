package lazyregexp

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSameAsRegexp(t *testing.T) {
	const pat = `(\w+)@(\w+)`
	lazy, eager := New(pat), regexp.MustCompile(pat)
	in := "a@b, c@d and e"
	if lazy.MatchString(in) != eager.MatchString(in) || lazy.Match([]byte("x")) != eager.Match([]byte("x")) {
		t.Error("Match differs")
	}
	if !slices.Equal(lazy.FindStringSubmatch(in), eager.FindStringSubmatch(in)) {
		t.Error("FindStringSubmatch differs")
	}
	if got, want := lazy.FindAllStringSubmatch(in, -1), eager.FindAllStringSubmatch(in, -1); len(got) != len(want) || !slices.Equal(got[1], want[1]) {
		t.Error("FindAllStringSubmatch differs")
	}
	if lazy.ReplaceAllString(in, "$2") != eager.ReplaceAllString(in, "$2") ||
		lazy.ReplaceAllStringFunc(in, strings.ToUpper) != eager.ReplaceAllStringFunc(in, strings.ToUpper) {
		t.Error("Replace differs")
	}
}

// TestCompiledAtOnceInTests: a bad expression fails when it is declared.
func TestCompiledAtOnceInTests(t *testing.T) {
	if !inTest {
		t.Fatal("inTest is false in a test binary")
	}
	defer func() {
		if recover() == nil {
			t.Error("New(`(`) did not panic")
		}
	}()
	New(`(`)
}

func TestConcurrentFirstUse(t *testing.T) {
	r := &Regexp{str: `^a+$`} // not compiled yet, whatever inTest says
	done := make(chan bool)
	for range 8 {
		go func() { done <- r.MatchString("aaa") }()
	}
	for range 8 {
		if !<-done {
			t.Error("no match")
		}
	}
}
