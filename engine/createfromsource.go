package engine

import (
	"context"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine/aampkg"
	"github.com/agentpack/agentpack/internal/fsys"
)

// sourceProvenance is the provenance create-package --from-source records
// in aam.yaml: AAM's fields (source_path is the source's scanned folder, as
// AAM has it) plus the source's name and the paths of the artifacts taken,
// which AAM's reader ignores.
type sourceProvenance struct {
	aampkg.Provenance `yaml:",inline"`
	SourceName        string   `json:"source_name" yaml:"source_name"`
	SourceArtifacts   []string `json:"source_artifacts" yaml:"source_artifacts"`
}

// sourceOrigin detects the artifacts of the registered artifact source
// opt.FromSource names ("<source>[/<artifact>]") at its pinned commit,
// fetching the commit into the cache when it is missing.
func (e *Engine) sourceOrigin(ctx context.Context, req Request, opt CreatePackageOptions) (pkgOrigin, error) {
	name, artifact, _ := strings.Cut(opt.FromSource, "/")
	m, err := e.loadSources(ctx, req)
	if err != nil {
		return pkgOrigin{}, err
	}
	src, err := findSource(m, name)
	if err != nil {
		return pkgOrigin{warnings: m.Warnings}, err
	}
	dir, err := e.sourceCheckout(ctx, *src)
	warnings := append(m.Warnings, e.takeRepairs()...)
	if err != nil {
		return pkgOrigin{warnings: warnings}, err
	}
	root := abs(dir)
	found, w, err := detectPackageArtifacts(fsys.NewDirFS(e.Sys, root), src.Path)
	if err != nil {
		return pkgOrigin{warnings: warnings}, err
	}
	def := packageArtifactName(src.Name)
	if artifact != "" {
		def = packageArtifactName(artifact[strings.LastIndex(artifact, "/")+1:])
	}
	return pkgOrigin{root: root, found: found, defaultName: def, artifact: artifact, warnings: append(warnings, w...),
		provenance: &sourceProvenance{SourceName: src.Name, Provenance: aampkg.Provenance{SourceType: "git", SourceURL: src.URL,
			SourceRef: src.Ref, SourcePath: src.Path, SourceCommit: src.Commit, FetchedAt: time.Now().UTC().Format(time.RFC3339)}}}, nil
}
