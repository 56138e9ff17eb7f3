package main

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestNarrowedParseMatchesWhole: whenever the model narrowed to one
// command parses a command line (or exits on --version), the whole model
// parses it the same way: the same command, global flags, command fields
// and output. Command lines come from the whole model: every command with
// each of its flags, global flags before and after the command, flag values
// that name other commands, and --version among them.
func TestNarrowedParseMatchesWhole(t *testing.T) {
	var cli CLI
	whole, err := newParser(&cli, &App{})
	if err != nil {
		t.Fatal(err)
	}
	narrowedOK, narrowedFailed := 0, 0
	for _, args := range commandLines(whole.Model.Node) {
		n, ok := narrowCLI(args)
		if !ok {
			continue
		}
		got, ok := parseWith(n.target, args, func() Globals { return n.globals() })
		if !ok {
			narrowedFailed++ // Main parses again on the whole model
			continue
		}
		narrowedOK++
		var full CLI
		want, _ := parseWith(&full, args, func() Globals { return full.Globals })
		if got != want {
			t.Errorf("%q:\n narrowed: %s\n whole:    %s", args, got, want)
		}
	}
	if narrowedOK < 300 || narrowedFailed < 20 {
		t.Errorf("%d command lines parsed on a narrowed model, %d failed: too few cases", narrowedOK, narrowedFailed)
	}
}

// TestNarrowCLIRefuses lists the command lines that always get the whole
// model, and some that do not (it fails if CLI gains a method, which turns
// narrowing off).
func TestNarrowCLIRefuses(t *testing.T) {
	for _, args := range [][]string{
		{}, {"--json"}, {"help"}, {"help", "status"}, {"status", "--help"}, {"status", "-h"},
		{"snapshots", "show", "--help=true"}, {"--repo", "x"}, {"status", "-qh"}, {"--version", "-h"},
	} {
		if _, ok := narrowCLI(args); ok {
			t.Errorf("%q narrowed", args)
		}
	}
	for _, args := range [][]string{{"status"}, {"--version"}, {"--json", "plan"}, {"plan", "--", "--help"}} {
		if _, ok := narrowCLI(args); !ok {
			t.Errorf("%q not narrowed", args)
		}
	}
}

// parseWith parses args into target and renders what kong made of them;
// ok is false for a parse error.
func parseWith(target any, args []string, globals func() Globals) (string, bool) {
	var stdout, stderr bytes.Buffer
	app := &App{Stdout: &stdout, Stderr: &stderr}
	parser, err := newParser(target, app)
	if err != nil {
		return "build: " + err.Error(), false
	}
	var kctx *kong.Context
	exit := func() (code int) {
		code = -1
		defer func() {
			if r := recover(); r != nil {
				code = r.(exitPanic).code
			}
		}()
		kctx, err = parser.Parse(args)
		return
	}()
	if exit != -1 {
		return fmt.Sprintf("exit %d stdout %q stderr %q", exit, stdout.String(), stderr.String()), true
	}
	if err != nil {
		return "error: " + err.Error(), false
	}
	cmd := reflect.ValueOf(target).Elem().FieldByName(commandField(kctx.Command()))
	return fmt.Sprintf("command %q globals %+v fields %+v stdout %q stderr %q",
		kctx.Command(), globals(), cmd.Interface(), stdout.String(), stderr.String()), true
}

// commandField is the CLI field of the top-level command of a kong command
// path ("snapshots show <id>").
func commandField(path string) string {
	name := strings.Fields(path)[0]
	t := reflect.TypeFor[CLI]()
	for i := range t.NumField() {
		if _, ok := t.Field(i).Tag.Lookup("cmd"); ok && commandName(t.Field(i)) == name {
			return t.Field(i).Name
		}
	}
	return ""
}

// commandLines builds command lines for every leaf command of root.
func commandLines(root *kong.Node) [][]string {
	var out [][]string
	globals := [][]string{nil, {"--json"}, {"--profile", "plan"}, {"--repo=status", "-q"}, {"--target", "codex", "--dry-run"}}
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		var leaf = true
		for _, c := range n.Children {
			if c.Type == kong.CommandNode {
				leaf = false
				walk(c, append(append([]string{}, path...), c.Name))
			}
		}
		if !leaf || len(path) == 0 {
			return
		}
		var pos []string
		for _, p := range n.Positional {
			if p.Required {
				pos = append(pos, sampleValue(p))
			}
		}
		base := append(append([]string{}, path...), pos...)
		for _, g := range globals {
			out = append(out, concat(g, base), concat(base, g))
		}
		out = append(out, concat([]string{"--version"}, base), concat(base, []string{"--version"}),
			concat(base, []string{"--bogus"}), concat(base, []string{"extra", "args"}), concat(base, []string{"--", "--help"}))
		for _, f := range n.Flags {
			flag := []string{"--" + f.Name}
			if !f.IsBool() && !f.IsCounter() {
				flag = append(flag, sampleValue(f.Value))
			}
			out = append(out, concat(base, flag), concat(concat([]string{"--json"}, base), flag))
		}
	}
	walk(root, nil)
	out = append(out, []string{"--version"}, []string{"--version", "status"}, []string{"--json", "--version"},
		[]string{"--profile", "--version"}, []string{"--version", "bogus"})
	return out
}

func sampleValue(v *kong.Value) string {
	if v.Enum != "" {
		return strings.Split(v.Enum, ",")[0]
	}
	switch v.Target.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Float64:
		return "3"
	}
	return "status"
}

func concat(a, b []string) []string { return append(append([]string{}, a...), b...) }
