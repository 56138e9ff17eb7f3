package mcpserver

import (
	"context"
	"net/url"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
)

// The artifact-source tools (SPEC §10) call the engine functions behind
// `agentpack source ...`; their envelopes are the CLI's (command "source").

var (
	pArtType = enum("type", "skill", "prompt", "command", "agent", "instructions")

	sourceListSchema       = objectSchema([]prop{pRepo})
	sourceScanSchema       = objectSchema([]prop{pRepo, pName, pArtType}, "name")
	sourceCandidatesSchema = objectSchema([]prop{pRepo, str("source", ""), pArtType})
	sourceDiffSchema       = objectSchema([]prop{pRepo, pName}, "name")
	sourceAddSchema        = objectSchema([]prop{pRepo,
		str("spec", "owner/repo[@ref], https URL, git@host:o/r or file:// URL."), str("ref", "Branch, tag or commit."),
		str("path", "Folder to scan."), str("name", "Default: repo name."), pYes}, "spec", "yes")
	sourceRemoveSchema = objectSchema([]prop{pRepo, pName, boolean("purge_cache", ""), pYes}, "name", "yes")
	sourceUpdateSchema = objectSchema([]prop{pRepo, pName, boolean("all", ""), pYes}, "yes")
)

func sourceTools() []*tool {
	return []*tool{
		{name: "source_list", toolset: ToolsetSources, schema: sourceListSchema, command: "source", commandID: "source list", run: runSourceList,
			description: "List artifact sources."},
		{name: "source_scan", toolset: ToolsetSources, openWorld: true, schema: sourceScanSchema, command: "source", commandID: "source scan", run: runSourceScan,
			description: "List a source's artifacts."},
		{name: "source_candidates", toolset: ToolsetSources, openWorld: true, schema: sourceCandidatesSchema, command: "source", commandID: "source candidates", run: runSourceCandidates,
			description: "List source artifacts no module uses."},
		{name: "source_diff", toolset: ToolsetSources, openWorld: true, schema: sourceDiffSchema, command: "source", commandID: "source diff", run: runSourceDiff,
			description: "Show what changed upstream in a source."},
		{name: "source_add", toolset: ToolsetSources, openWorld: true, write: true, schema: sourceAddSchema, command: "source", commandID: "source add", run: runSourceAdd,
			description: "Add a git repo as an artifact source."},
		{name: "source_remove", toolset: ToolsetSources, write: true, schema: sourceRemoveSchema, command: "source", commandID: "source remove", run: runSourceRemove,
			description: "Remove an artifact source."},
		{name: "source_update", toolset: ToolsetSources, openWorld: true, write: true, schema: sourceUpdateSchema, command: "source", commandID: "source update", run: runSourceUpdate,
			description: "Re-pin sources to new commits."},
	}
}

// sourceEnvelope wraps one source engine call in its envelope.
func sourceEnvelope[T any](id string, data T, warnings []string, err error) *envelope.Envelope {
	return finish(envelope.New("source", id), data, warnings, err)
}

func runSourceList(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.SourceList(ctx, c.req)
	if nw, ok := noRepoWarning(c.req, err); ok {
		d, w, err = &engine.SourceListData{Sources: []engine.SourceInfo{}}, []string{nw}, nil
	}
	return sourceEnvelope("source list", d, w, err)
}

func runSourceScan(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.SourceScan(ctx, c.req, c.args.Name, c.args.Type)
	return sourceEnvelope("source scan", d, w, err)
}

func runSourceCandidates(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.SourceCandidates(ctx, c.req, c.args.Source, c.args.Type)
	return sourceEnvelope("source candidates", d, w, err)
}

func runSourceDiff(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.SourceDiff(ctx, c.req, c.args.Name)
	return sourceEnvelope("source diff", d, w, err)
}

func runSourceAdd(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.SourceAdd(ctx, c.req, engine.SourceAddOptions{Spec: c.args.Spec, Ref: c.args.Ref, Path: c.args.Path, Name: c.args.Name})
	return sourceEnvelope("source add", d, w, err)
}

func runSourceRemove(ctx context.Context, c *call) *envelope.Envelope {
	d, w, err := c.eng.SourceRemove(ctx, c.req, c.args.Name, c.args.PurgeCache)
	return sourceEnvelope("source remove", d, w, err)
}

func runSourceUpdate(ctx context.Context, c *call) *envelope.Envelope {
	if (c.args.Name == "") == !c.args.All {
		return envelope.New("source", "source update").Fail(
			apperr.New(apperr.InvalidArgument, "give exactly one of name or all=true").WithHint("list sources with source_list"), nil)
	}
	d, w, err := c.eng.SourceUpdate(ctx, c.req, engine.SourceUpdateOptions{Name: c.args.Name, All: c.args.All})
	return sourceEnvelope("source update", d, w, err)
}

// Source resources: agentpack://sources, agentpack://sources/{name} (the
// scan) and agentpack://sources/{name}/candidates.
const (
	URISources               = "agentpack://sources"
	SourceURITemplate        = "agentpack://sources/{name}"
	SourceCandidatesTemplate = "agentpack://sources/{name}/candidates"
	sourcesPrefix            = "agentpack://sources/"
)

// readSourceResource serves the source resources fresh from the engine.
func readSourceResource(ctx context.Context, eng *engine.Engine, req engine.Request, uri string) (*contents, error) {
	if uri == URISources {
		d, _, err := eng.SourceList(ctx, req)
		if _, ok := noRepoWarning(req, err); ok {
			d, err = &engine.SourceListData{Sources: []engine.SourceInfo{}}, nil
		}
		if err != nil {
			return nil, err
		}
		return jsonContents(uri, d)
	}
	rest := strings.TrimPrefix(uri, sourcesPrefix)
	name, candidates := rest, false
	if n, ok := strings.CutSuffix(rest, "/candidates"); ok {
		name, candidates = n, true
	}
	name, err := url.PathUnescape(name)
	if err != nil || name == "" || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return nil, apperr.New(apperr.InvalidArgument, "bad source resource %q", uri).
			WithHint("use %s or %s", SourceURITemplate, SourceCandidatesTemplate).With("uri", uri)
	}
	var d any
	if candidates {
		d, _, err = eng.SourceCandidates(ctx, req, name, "")
	} else {
		d, _, err = eng.SourceScan(ctx, req, name, "")
	}
	if err != nil {
		// The uri lets resources/read answer a missing source with
		// "resource not found", as a missing module.
		if ae, ok := err.(*apperr.Error); ok {
			ae.With("uri", uri)
		}
		return nil, err
	}
	return jsonContents(uri, d)
}

func isSourceURI(uri string) bool { return uri == URISources || strings.HasPrefix(uri, sourcesPrefix) }
