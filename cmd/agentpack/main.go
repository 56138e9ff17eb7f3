// Command agentpack compiles a desired-state repo of AI-coding assets into
// files for Codex, Claude Code, Cursor and VS Code, and deploys them.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
