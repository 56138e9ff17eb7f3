package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/internal/textdiff"
)

// Printer writes human output, coloured only when writing to a terminal and
// neither NO_COLOR nor --no-color is set.
type Printer struct {
	W     io.Writer
	color bool
	home  string
	cwd   string
}

func (a *App) printer() *Printer    { return a.newPrinter(a.Stdout) }
func (a *App) errPrinter() *Printer { return a.newPrinter(a.Stderr) }

func (a *App) newPrinter(w io.Writer) *Printer {
	color := isTerminal(w) && !a.Globals.NoColor && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	return &Printer{W: w, color: color, home: a.Env.Home, cwd: a.Env.Cwd}
}

// Printf writes formatted text.
func (p *Printer) Printf(format string, args ...any) { fmt.Fprintf(p.W, format, args...) }

func (p *Printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *Printer) red(s string) string    { return p.paint("31", s) }
func (p *Printer) green(s string) string  { return p.paint("32", s) }
func (p *Printer) yellow(s string) string { return p.paint("33", s) }
func (p *Printer) cyan(s string) string   { return p.paint("36", s) }
func (p *Printer) bold(s string) string   { return p.paint("1", s) }
func (p *Printer) dim(s string) string    { return p.paint("2", s) }

// Path shortens a path under the working directory to ./… and one under
// $HOME to ~/….
func (p *Printer) Path(path string) string {
	if p.cwd != "" {
		if rel, err := filepath.Rel(p.cwd, path); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
			return "./" + filepath.ToSlash(rel)
		}
	}
	if p.home != "" {
		if rel, err := filepath.Rel(p.home, path); err == nil && !strings.HasPrefix(rel, "..") {
			if rel == "." {
				return "~"
			}
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return path
}

// DiffOf prints d as [Printer.Diff] does.
func (p *Printer) DiffOf(d textdiff.Diff) {
	if !p.color {
		// Straight from the file's bytes when the diff is all of a
		// created or deleted file.
		_, _ = d.WriteTo(p.W)
		return
	}
	p.Diff(d.String())
}

// Diff prints a unified diff with coloured +/- lines.
func (p *Printer) Diff(unified string) {
	if !p.color {
		// Nothing to paint: the diff as it is, in one write (a cold diff
		// prints 10,000 of them).
		_, _ = io.WriteString(p.W, unified)
		return
	}
	for unified != "" {
		line := unified
		if i := strings.IndexByte(unified, '\n'); i >= 0 {
			line = unified[:i+1]
		}
		unified = unified[len(line):]
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			line = p.bold(line)
		case strings.HasPrefix(line, "@@"):
			line = p.cyan(line)
		case strings.HasPrefix(line, "+"):
			line = p.green(line)
		case strings.HasPrefix(line, "-"):
			line = p.red(line)
		}
		_, _ = io.WriteString(p.W, line)
	}
}
