package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

// completionScript renders a completion script for shell from the command
// model, so it never drifts from the real commands and flags.
func completionScript(app *kong.Application, shell string) (string, error) {
	cmds := map[string][]string{} // command path → words (subcommands and flags)
	var walk func(n *kong.Node, path string)
	walk = func(n *kong.Node, path string) {
		var words []string
		for _, c := range n.Children {
			if c.Type == kong.CommandNode {
				words = append(words, c.Name)
				walk(c, strings.TrimSpace(path+" "+c.Name))
			}
		}
		for _, f := range n.Flags {
			words = append(words, "--"+f.Name)
		}
		sort.Strings(words)
		cmds[path] = words
	}
	walk(app.Node, "")
	var globals []string
	for _, f := range app.Flags {
		globals = append(globals, "--"+f.Name)
	}
	paths := make([]string, 0, len(cmds))
	for p := range cmds {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	switch shell {
	case "bash":
		b.WriteString("# bash completion for agentpack\n_agentpack() {\n  local cur words path i\n  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n  path=\"\"\n")
		b.WriteString("  for ((i=1; i<COMP_CWORD; i++)); do\n    case \"${COMP_WORDS[i]}\" in -*) ;; *) path=\"${path:+$path }${COMP_WORDS[i]}\";; esac\n  done\n  case \"$path\" in\n")
		for _, p := range paths {
			fmt.Fprintf(&b, "    %q) words=%q ;;\n", p, strings.Join(append(cmds[p], globals...), " "))
		}
		b.WriteString("    *) words=\"" + strings.Join(globals, " ") + "\" ;;\n  esac\n  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -F _agentpack agentpack\n")
	case "zsh":
		b.WriteString("#compdef agentpack\n_agentpack() {\n  local path=\"\" w\n  for w in ${words[2,CURRENT-1]}; do [[ $w == -* ]] || path=\"${path:+$path }$w\"; done\n  case \"$path\" in\n")
		for _, p := range paths {
			fmt.Fprintf(&b, "    %q) compadd -- %s ;;\n", p, strings.Join(append(cmds[p], globals...), " "))
		}
		b.WriteString("    *) compadd -- " + strings.Join(globals, " ") + " ;;\n  esac\n}\ncompdef _agentpack agentpack\n")
	case "fish":
		b.WriteString("# fish completion for agentpack\ncomplete -c agentpack -f\n")
		for _, g := range globals {
			fmt.Fprintf(&b, "complete -c agentpack -l %s\n", strings.TrimPrefix(g, "--"))
		}
		for _, c := range cmds[""] {
			if !strings.HasPrefix(c, "--") {
				fmt.Fprintf(&b, "complete -c agentpack -n __fish_use_subcommand -a %s\n", c)
			}
		}
		for _, p := range paths {
			if p == "" {
				continue
			}
			for _, w := range cmds[p] {
				if strings.HasPrefix(w, "--") {
					fmt.Fprintf(&b, "complete -c agentpack -n '__fish_seen_subcommand_from %s' -l %s\n", strings.Fields(p)[0], strings.TrimPrefix(w, "--"))
				} else {
					fmt.Fprintf(&b, "complete -c agentpack -n '__fish_seen_subcommand_from %s' -a %s\n", strings.Fields(p)[len(strings.Fields(p))-1], w)
				}
			}
		}
	default:
		return "", errUnknownShell
	}
	return b.String(), nil
}
