package main

import (
	"fmt"
	"io"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/alecthomas/kong"
)

// completeCommand is the hidden command the completion scripts run:
// `agentpack __complete <word>… <current word>` prints the candidates for
// the current word ("" when a new word starts), one a line, or the single
// line ":file" when the shell should complete file names.
const completeCommand = "__complete"

// runComplete prints the candidates for words and returns the exit code,
// always 0: a shell asking for candidates gets nothing rather than an error.
func runComplete(words []string, stdout io.Writer, env engine.Env) (code int) {
	defer func() {
		if r := recover(); r != nil {
			code = 0
		}
	}()
	model, err := completionModel()
	if err != nil {
		return 0
	}
	for _, c := range (&completer{root: model.Node, env: env}).Complete(words) {
		fmt.Fprintln(stdout, c)
	}
	return 0
}

// completionModel builds the same kong model [Main] parses with.
func completionModel() (*kong.Application, error) {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("agentpack"), kong.Vars{"version": envelope.Version}, kong.Exit(func(int) {}))
	if err != nil {
		return nil, err
	}
	return parser.Model, nil
}
