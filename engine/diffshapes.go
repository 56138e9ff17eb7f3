package engine

import (
	"sync"

	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/textdiff"
)

// diffShapes are the diff shapes of source files a diff's load hashed
// without keeping their bytes ([module.LoadShapesIn]), by path.
type diffShapes struct {
	mu sync.Mutex
	m  map[fsys.AbsPath]textdiff.Shape
}

func newDiffShapes() *diffShapes { return &diffShapes{m: map[fsys.AbsPath]textdiff.Shape{}} }

// add records the shape of the file at src; safe for concurrent use.
func (s *diffShapes) add(src fsys.AbsPath, shape textdiff.Shape) {
	s.mu.Lock()
	s.m[src] = shape
	s.mu.Unlock()
}

// of is the shape of the bytes c creates, when c creates a file copied
// from a source whose shape was taken (s may be nil).
func (s *diffShapes) of(c *plan.Change) (textdiff.Shape, bool) {
	if s == nil || c.Op != plan.OpCreate || c.After() != nil || len(c.Entries) > 0 {
		return textdiff.Shape{}, false
	}
	src := c.Src()
	if src == "" {
		return textdiff.Shape{}, false
	}
	s.mu.Lock()
	shape, ok := s.m[src]
	s.mu.Unlock()
	return shape, ok
}
