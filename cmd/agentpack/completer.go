package main

import (
	"slices"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/alecthomas/kong"
)

// fileDirective is the one line `__complete` prints when the word is a file
// or folder name (a `type:"path"` flag such as --repo): the shell then
// completes paths itself.
const fileDirective = ":file"

// completer lists what may follow the words typed so far on an agentpack
// command line. It reads the kong model, so it knows every command and flag,
// which flags take a value, and which positional argument comes next; the
// values of ids, profiles, targets and sources come from [completionValues].
type completer struct {
	root *kong.Node
	env  engine.Env
}

// cursor is where the words before the one being completed leave the parser.
type cursor struct {
	node *kong.Node // the deepest command named so far
	args []string   // positional words given to node
	// pending is the flag still waiting for its value (`--repo <TAB>`), and
	// pendingOwner the command that declares it.
	pending      *kong.Flag
	pendingOwner *kong.Node
	flags        map[string]string // flag values given so far, by flag name
	dashDash     bool              // after `--` every word is positional
}

// Complete returns the candidates for the last word of words, which is the
// word being completed ("" at the start of a new word), sorted and unique.
func (c *completer) Complete(words []string) []string {
	words = slices.Clone(words)
	if len(words) == 0 {
		words = []string{""}
	}
	for i, w := range words {
		if w == `""` { // how older PowerShell passes an empty argument
			words[i] = ""
		}
	}
	cur := c.walk(words[:len(words)-1])
	word := words[len(words)-1]
	var out []string
	switch {
	case cur.pending != nil:
		out = c.valueCandidates(cur, cur.pendingOwner, cur.pending.Value, word)
	case !cur.dashDash && strings.HasPrefix(word, "--") && strings.Contains(word, "="):
		name, value, _ := strings.Cut(word[2:], "=")
		if f, owner := cur.flag(name); f != nil && takesValue(f) {
			out = withPrefix("--"+name+"=", c.valueCandidates(cur, owner, f.Value, value))
		}
	case !cur.dashDash && strings.HasPrefix(word, "-"):
		out = matching(cur.flagNames(), word)
	case hasCommands(cur.node) && len(cur.args) == 0:
		out = matching(commandNames(cur.node), word)
	default:
		if pos := nextPositional(cur.node, len(cur.args)); pos != nil {
			out = c.valueCandidates(cur, cur.node, pos, word)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// walk follows words through the model as kong would: a flag that takes a
// value consumes the next word, so `--repo DIR plan` names `plan`, never
// `DIR`.
func (c *completer) walk(words []string) cursor {
	cur := cursor{node: c.root, flags: map[string]string{}}
	for _, w := range words {
		switch {
		case cur.pending != nil:
			cur.flags[cur.pending.Name] = w
			cur.pending, cur.pendingOwner = nil, nil
		case cur.dashDash || w == "-":
			cur.positional(w)
		case w == "--":
			cur.dashDash = true
		case strings.HasPrefix(w, "--"):
			name, value, hasValue := strings.Cut(w[2:], "=")
			f, owner := cur.flag(name)
			switch {
			case f == nil:
			case hasValue:
				cur.flags[f.Name] = value
			case takesValue(f):
				cur.pending, cur.pendingOwner = f, owner
			}
		case strings.HasPrefix(w, "-"):
			cur.shortFlags(w[1:])
		default:
			cur.positional(w)
		}
	}
	return cur
}

// shortFlags reads a cluster such as -qv; a short flag that takes a value
// takes the rest of the word, or else the next word.
func (cur *cursor) shortFlags(cluster string) {
	for i, r := range cluster {
		f, owner := cur.short(r)
		if f == nil || !takesValue(f) {
			continue
		}
		if rest := cluster[i+len(string(r)):]; rest != "" {
			cur.flags[f.Name] = rest
		} else {
			cur.pending, cur.pendingOwner = f, owner
		}
		return
	}
}

// positional records a word that is not a flag: a subcommand when the
// current command has subcommands, else its next positional argument.
func (cur *cursor) positional(w string) {
	if hasCommands(cur.node) && len(cur.args) == 0 && !cur.dashDash {
		for _, child := range cur.node.Children {
			if child.Type == kong.CommandNode && (child.Name == w || slices.Contains(child.Aliases, w)) {
				cur.node = child
				return
			}
		}
	}
	cur.args = append(cur.args, w)
}

// flag finds a long flag of the current command or of one of its parents
// (kong accepts a parent's flags anywhere after it), with its owner.
func (cur *cursor) flag(name string) (*kong.Flag, *kong.Node) {
	for n := cur.node; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if f.Name == name || slices.Contains(f.Aliases, name) {
				return f, n
			}
		}
	}
	return nil, nil
}

func (cur *cursor) short(r rune) (*kong.Flag, *kong.Node) {
	for n := cur.node; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if f.Short == r {
				return f, n
			}
		}
	}
	return nil, nil
}

// flagNames lists the visible long flags valid at the cursor.
func (cur *cursor) flagNames() []string {
	var out []string
	for n := cur.node; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if !f.Hidden {
				out = append(out, "--"+f.Name)
			}
		}
	}
	return out
}

// valueCandidates lists the values of v (a flag of owner, or the next
// positional argument of the current command) that start with word.
// Comma-separated list flags (`--targets codex,cu`) complete their last
// element and skip the elements already given.
func (c *completer) valueCandidates(cur cursor, owner *kong.Node, v *kong.Value, word string) []string {
	if v.Tag != nil && slices.Contains([]string{"path", "existingfile", "existingdir"}, v.Tag.Type) {
		return []string{fileDirective}
	}
	var values []string
	switch kind, ok := completionSlots[slotKey(owner, v)]; {
	case ok && kind == slotCommand:
		values = commandNames(commandAt(c.root, cur.args))
	case ok:
		values = completionValues{env: c.env, repo: cur.flags["repo"]}.of(kind)
	case v.Enum != "":
		values = v.EnumSlice()
	}
	if v.Flag == nil || !v.IsSlice() {
		return matching(values, word)
	}
	sep := ","
	if v.Tag != nil && v.Tag.Sep > 0 {
		sep = string(v.Tag.Sep)
	}
	i := strings.LastIndex(word, sep)
	given, last := strings.Split(word[:max(i, 0)], sep), word[i+1:]
	var out []string
	for _, val := range matching(values, last) {
		if !slices.Contains(given, val) {
			out = append(out, word[:i+1]+val)
		}
	}
	return out
}

// slotKey names a flag or positional argument for [completionSlots]: the
// command path, then --flag or <arg> ("rollback --to", "remove <id>",
// "--profile" for a global flag).
func slotKey(owner *kong.Node, v *kong.Value) string {
	var path []string
	for n := owner; n != nil && n.Parent != nil; n = n.Parent {
		path = append([]string{n.Name}, path...)
	}
	slot := "<" + v.Name + ">"
	if v.Flag != nil {
		slot = "--" + v.Flag.Name
	}
	return strings.TrimSpace(strings.Join(path, " ") + " " + slot)
}

// commandAt follows path (such as `help`'s words) from root and returns the
// command it names, or nil.
func commandAt(root *kong.Node, path []string) *kong.Node {
	cur := cursor{node: root, flags: map[string]string{}}
	for _, w := range path {
		before := cur.node
		cur.positional(w)
		if cur.node == before {
			return nil
		}
	}
	return cur.node
}

func nextPositional(n *kong.Node, given int) *kong.Value {
	switch {
	case given < len(n.Positional):
		return n.Positional[given]
	case len(n.Positional) > 0 && n.Positional[len(n.Positional)-1].IsSlice():
		return n.Positional[len(n.Positional)-1]
	}
	return nil
}

func takesValue(f *kong.Flag) bool { return !f.IsBool() && !f.IsCounter() }

func hasCommands(n *kong.Node) bool {
	return n != nil && slices.ContainsFunc(n.Children, func(c *kong.Node) bool { return c.Type == kong.CommandNode })
}

// commandNames lists n's visible subcommands.
func commandNames(n *kong.Node) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			out = append(out, c.Name)
		}
	}
	return out
}

// matching keeps the values that start with prefix.
func matching(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// withPrefix puts prefix before each value, except the file directive.
func withPrefix(prefix string, values []string) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		if v != fileDirective {
			v = prefix + v
		}
		out = append(out, v)
	}
	return out
}
