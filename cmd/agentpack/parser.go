package main

import (
	"reflect"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/alecthomas/kong"
)

// buildError is a kong model that does not build: a bug in a command
// struct.
type buildError struct{ error }

// parse parses args into a new CLI and returns the parser, the parsed
// context and the global flags. It parses on a model narrowed to the named
// command when it can ([narrowCLI]), else, or when that parse fails, on the
// whole one.
func parse(args []string, app *App) (*kong.Kong, *kong.Context, Globals, error) {
	if n, ok := narrowCLI(args); ok {
		if parser, err := newParser(n.target, app); err == nil {
			if kctx, err := parser.Parse(args); err == nil && n.command != "" {
				return parser, kctx, n.globals(), nil
			}
		}
	}
	var cli CLI
	parser, err := newParser(&cli, app)
	if err != nil {
		return nil, nil, Globals{}, buildError{err}
	}
	kctx, err := parser.Parse(args)
	return parser, kctx, cli.Globals, err
}

// newParser builds the kong parser of target: a *CLI, or a narrowed copy
// of it.
func newParser(target any, app *App) (*kong.Kong, error) {
	return kong.New(target,
		kong.Name("agentpack"),
		kong.Description("Compile AI-coding assets (instructions, skills, prompts, commands, agents) into files for codex, claude_code, cursor and vscode, and deploy them safely."),
		kong.Writers(app.Stdout, app.Stderr),
		kong.Exit(func(c int) { panic(exitPanic{c}) }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Bind(app),
		kong.Vars{"version": envelope.Version},
	)
}

// narrowed is a CLI struct cut down to one top-level command.
type narrowed struct {
	target  any // a pointer to the new struct, for kong.New
	globals func() Globals
	// command is the one command kept, "" for none: then only --version,
	// which exits while parsing, can make the parse succeed.
	command string
}

// narrowCLI returns a copy of the CLI struct with the global flags and only
// the top-level command args name, when kong can parse args with it: the
// model kong builds by reflection over every command is most of what a
// command costs before it starts (~1.8 ms). The parse is the same: until
// the command's name, args can only hold global flags, and from it on the
// command's own subtree is unchanged.
//
// It refuses when args ask for help (whose text lists other commands),
// name `help`, which walks the whole model, or name no command and do not
// ask for --version; and when CLI has methods (kong hooks, which the copy
// would not have). A parse that fails on the narrowed model is redone on
// the whole one, so errors and their suggestions are unchanged.
func narrowCLI(args []string) (n narrowed, ok bool) {
	name := commandFromArgs(args)
	if name == "agentpack" {
		name = ""
		if !slices.Contains(args, "--version") {
			return narrowed{}, false
		}
	}
	if name == "help" || asksForHelp(args) {
		return narrowed{}, false
	}
	t := reflect.TypeFor[CLI]()
	if reflect.PointerTo(t).NumMethod() > 0 {
		return narrowed{}, false
	}
	defer func() {
		if recover() != nil { // a field StructOf cannot copy: parse on the whole model
			n, ok = narrowed{}, false
		}
	}()
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); f.IsExported() && (!isCmd || commandName(f) == name) {
			fields = append(fields, f)
		}
	}
	v := reflect.New(reflect.StructOf(fields))
	globals := v.Elem().FieldByName("Globals")
	return narrowed{target: v.Interface(), globals: func() Globals { return globals.Interface().(Globals) }, command: name}, true
}

// asksForHelp reports whether args hold -h or --help, alone or among other
// short flags, before any "--".
func asksForHelp(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--help" || strings.HasPrefix(a, "--help="):
			return true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'h'):
			return true
		}
	}
	return false
}

// commandName is the name kong gives a command field of CLI.
func commandName(f reflect.StructField) string {
	if name := f.Tag.Get("name"); name != "" {
		return name
	}
	return strings.ToLower(f.Name)
}
