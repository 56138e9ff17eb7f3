package frontmatter

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestParseSimpleMatchesYAML checks that every block the fast path takes
// gives exactly the node yaml.v3 gives (kinds, tags, styles, values,
// lines, columns), and that it leaves to the parser what it cannot read.
func TestParseSimpleMatchesYAML(t *testing.T) {
	cases := []string{
		"name: s00001\ndescription: skill 00001\n",
		"name: review\ndescription: Review the staged diff for bugs.\n",
		"name:   spaced\n",
		"a-b_c: It's \"quoted\" inside, [with] {flow} chars, 50% & more!\n",
		"k: yes\nl: no\nm: on\nn: off\no: y\np: N\nq: nan\nr: inf\ns: Infinity\n",
		"k: true\n", "k: False\n", "k: NULL\n", "true: x\n", "null: x\n",
		"k: 12\n", "k: 1.5\n", "k: 2024-01-01\n", "k: .inf\n", "k: ~\n", "k:\n", "k: \n",
		"k: a: b\n", "k: a #c\n", "k: a#c\n", "k: a:b\n", "k: a:\n", "k: a \n", "k:\tv\n",
		"k: 'q'\n", "k: \"q\"\n", "k: [a, b]\n", "k: {a: b}\n", "k: &a x\n", "k: *a\n", "k: !t x\n",
		"k: |\n  x\n", "k: >\n  x\n", "k: -x\n", "- a\n", "# c\nk: v\n", "k: v # c\n",
		"k: v\n\nl: w\n", "k: v\n  more\n", " k: v\n", "k: v\nk: w\n", "k: v\r\n", "k: é\n",
		"k: v", "", "\n", "1: v\n", "k.x: v\n", "k x: v\n", "<<: v\n", "k: @x\n", "k: `x\n", "k: %x\n",
	}
	r := rand.New(rand.NewPCG(1, 2))
	atoms := []string{"a", "Z", "0", " ", ":", "#", "-", "'", "\"", ",", "[", "}", "!", "&", "*", "yes", "true", "null", ".", "é", "\t"}
	for range 3000 {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteString([]string{"name", "description", "k-1", "true", "A"}[r.IntN(5)])
			b.WriteString([]string{": ", ":", ":  ", " : "}[r.IntN(4)])
			b.WriteString([]string{"v", "Yes", "t", "n", "x"}[r.IntN(5)])
			for range r.IntN(6) {
				b.WriteString(atoms[r.IntN(len(atoms))])
			}
			b.WriteString("\n")
		}
		cases = append(cases, b.String())
	}
	took := 0
	for _, src := range cases {
		got, ok := parseSimple([]byte(src))
		if !ok {
			continue
		}
		took++
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Errorf("%q: the fast path took what YAML refuses: %v", src, err)
			continue
		}
		if m := mapping(got); len(doc.Content) != 1 || !reflect.DeepEqual(m, doc.Content[0]) {
			t.Errorf("%q:\nfast %s\nyaml %s", src, dump(m), dump(doc.Content[0]))
		}
	}
	if took < 300 {
		t.Errorf("the fast path took only %d blocks", took)
	}
	for _, src := range []string{"name: s00001\ndescription: skill 00001\n", "a-b_c: It's fine, [really]\n"} {
		if _, ok := parseSimple([]byte(src)); !ok {
			t.Errorf("%q: not taken by the fast path", src)
		}
	}
}

func dump(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		b.WriteString("\n" + strings.Repeat("  ", depth))
		c := *n
		c.Content = nil
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(strings.ReplaceAll(fmtNode(c), "\n", " ")), "  ", " "))
		for _, k := range n.Content {
			walk(k, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

func fmtNode(n yaml.Node) string {
	return strings.Join([]string{n.Tag, n.Value, n.HeadComment, n.LineComment, n.FootComment, n.Anchor,
		string(rune('0' + n.Kind)), string(rune('0' + n.Style)), string(rune('0' + n.Line)), string(rune('0' + n.Column))}, "|")
}

// A block kept as pairs answers every method as the same block parsed
// into nodes does, and changing one (Set, or a node Node returned) never
// changes what another caller of the block sees.
func TestSimpleBlockActsAsParsed(t *testing.T) {
	for _, src := range []string{
		"name: s00001\ndescription: skill 00001\n",
		"description: Review it.\nname: review\nmodel: fast\ntools: Read, Grep\n",
		"k: v\n",
	} {
		pairs, ok := parseSimple([]byte(src))
		if !ok {
			t.Fatalf("%q: not taken by the fast path", src)
		}
		simple := &Block{simple: pairs}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		parsed := &Block{node: doc.Content[0]}
		if !reflect.DeepEqual(simple.Keys(), parsed.Keys()) {
			t.Errorf("%q: keys %v, parsed %v", src, simple.Keys(), parsed.Keys())
		}
		for _, key := range append(parsed.Keys(), "missing") {
			if simple.String(key) != parsed.String(key) || simple.Has(key) != parsed.Has(key) ||
				!reflect.DeepEqual(simple.Value(key), parsed.Value(key)) || !reflect.DeepEqual(simple.Node(key), parsed.Node(key)) {
				t.Errorf("%q: key %q answered otherwise than parsed", src, key)
			}
		}
		for _, keys := range [][]string{nil, {"name"}, {"description", "tools", "k"}} {
			if a, b := string(simple.Subset(keys...).Render([]byte("body\n"))), string(parsed.Subset(keys...).Render([]byte("body\n"))); a != b {
				t.Errorf("%q: subset %v renders\n%s\nparsed\n%s", src, keys, a, b)
			}
		}
		if a, b := string(simple.Render(nil)), string(parsed.Render(nil)); a != b {
			t.Errorf("%q: renders\n%s\nparsed\n%s", src, a, b)
		}
		first := parsed.Keys()[0]
		simple.Node(first).Value = "changed by a caller"
		if simple.String(first) == "changed by a caller" {
			t.Errorf("%q: a change to a returned node changed the block", src)
		}
		simple.Set("name", "set")
		parsed.Set("name", "set")
		if a, b := string(simple.Render(nil)), string(parsed.Render(nil)); a != b || simple.String("name") != "set" {
			t.Errorf("%q: after Set renders\n%s\nparsed\n%s", src, a, b)
		}
	}
}
