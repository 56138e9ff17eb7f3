package engine

import (
	"context"
	"fmt"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
)

// SourceRegistryPrefix starts the `registry` of a search result that is an
// artifact of an artifact source ("source:<name>").
const SourceRegistryPrefix = "source:"

// sourceHits are the artifacts of req's artifact sources at their pinned
// commits as search hits: named "<source>/<artifact>" (what `install` and
// `create-package --from-source` take), the short commit as version, the
// artifact's type. No agentpack.yaml, or one without sources, gives none;
// a source that cannot be scanned is a warning.
func (e *Engine) sourceHits(ctx context.Context, req Request) ([]registry.Scored, []string) {
	m, err := e.loadSources(ctx, req)
	if err != nil {
		return nil, nil // search works without a desired-state repo
	}
	var hits []registry.Scored
	var warnings []string
	for _, src := range m.Sources {
		if src.Commit == "" {
			continue
		}
		dir, err := e.sourceCheckout(ctx, src)
		if err == nil {
			var arts []Artifact
			if arts, err = e.scanSource(m, src, dir, src.Commit); err == nil {
				for _, a := range arts {
					hits = append(hits, registry.Scored{Registry: SourceRegistryPrefix + src.Name, Hit: registry.Hit{
						Name: src.Name + "/" + a.Name, Version: ShortHash(src.Commit), Description: a.Description,
						ArtifactTypes: []string{searchType(a.Type)}, Keywords: []string{}}})
				}
				continue
			}
		}
		warnings = append(warnings, fmt.Sprintf("artifact source %s could not be searched: %s", src.Name, apperr.As(err).Message))
	}
	return hits, append(warnings, e.takeRepairs()...)
}

// searchType is the search type of an artifact type ("instructions" is
// "instruction", as in a registry's index).
func searchType(t module.Type) string {
	if t == module.TypeInstructions {
		return "instruction"
	}
	return string(t)
}
