package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/schollz/progressbar/v3"
)

// progress draws progress bars on stderr for long work: one for the
// repos of a multi-repo fetch, a spinner with go-git's own progress text
// for a clone, one for the files a deploy or rollback writes. Bars are
// cleared when they finish, so the output that follows is unchanged.
type progress struct {
	w    io.Writer
	mu   sync.Mutex
	bars []*progressbar.ProgressBar
}

// progressTo is where progress goes: stderr when it is a terminal and the
// output is for people (never under --json or -q, never for `mcp serve`,
// whose stderr is its log); nil otherwise.
func (a *App) progressTo() io.Writer {
	if a.Globals.JSON || a.Globals.Quiet {
		return nil
	}
	return a.progressOut
}

// attachProgress gives e the progress hooks of this invocation, if any.
func (a *App) attachProgress(e *engine.Engine) {
	w := a.progressTo()
	if w == nil {
		return
	}
	if a.progress == nil {
		a.progress = &progress{w: w}
	}
	p := a.progress
	var fetchBar, applyBar *progressbar.ProgressBar
	e.Progress = func(done, total int, what string) {
		if total < 2 {
			return // one repo: the clone spinner says enough
		}
		if fetchBar == nil || fetchBar.IsFinished() {
			fetchBar = p.bar(total, "fetching")
		}
		fetchBar.Describe("fetched " + what)
		_ = fetchBar.Set(done)
	}
	e.ApplyProgress = func(done, total int) {
		if applyBar == nil || applyBar.IsFinished() {
			applyBar = p.bar(total, "writing files")
		}
		_ = applyBar.Set(done)
	}
	e.GitProgress = &gitProgress{p: p}
}

// bar starts a bar of max steps (-1: a spinner).
func (p *progress) bar(max int, what string) *progressbar.ProgressBar {
	b := progressbar.NewOptions(max, progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(what),
		progressbar.OptionClearOnFinish(), progressbar.OptionShowCount(), progressbar.OptionThrottle(65*time.Millisecond),
		progressbar.OptionSetWidth(30))
	p.mu.Lock()
	p.bars = append(p.bars, b)
	p.mu.Unlock()
	return b
}

// clear removes every bar still on the screen (a spinner never finishes by
// itself, a bar of a failed step neither).
func (p *progress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.bars {
		if !b.IsFinished() {
			_ = b.Clear()
			_ = b.Exit()
		}
	}
	p.bars = nil
}

// gitProgress shows go-git's progress text ("Counting objects: 42% …")
// and retry notices as a spinner's description.
type gitProgress struct {
	p    *progress
	mu   sync.Mutex
	spin *progressbar.ProgressBar
	line []byte
}

// Write implements io.Writer; go-git ends its lines with \r or \n.
func (g *gitProgress) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.spin == nil || g.spin.IsFinished() {
		g.spin = g.p.bar(-1, "fetching")
	}
	g.line = append(g.line, b...)
	if i := bytes.LastIndexAny(g.line, "\r\n"); i >= 0 {
		text := strings.TrimSpace(string(g.line[:i]))
		if j := strings.LastIndexAny(text, "\r\n"); j >= 0 {
			text = text[j+1:]
		}
		if text != "" {
			g.spin.Describe(clipText(text, 60))
		}
		g.line = append(g.line[:0], g.line[i+1:]...)
	}
	_ = g.spin.Add(1)
	return len(b), nil
}
