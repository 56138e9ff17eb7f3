// Package envelope is the one JSON document every --json command prints and
// every MCP tool returns as structuredContent (SPEC §7).
package envelope

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/jsonstream"
	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// SchemaVersion is the envelope's schema_version.
const SchemaVersion = 1

// Version is agentpack's version, set at build time with
// -ldflags "-X github.com/agentpack/agentpack/internal/envelope.Version=…".
var Version = "0.1.0-dev"

// Envelope is the one JSON document every --json command and every MCP tool
// result carries (SPEC §7).
type Envelope struct {
	SchemaVersion int      `json:"schema_version"`
	OK            bool     `json:"ok"`
	Command       string   `json:"command"`
	CommandID     string   `json:"command_id"`
	CommandPath   []string `json:"command_path"`
	Version       string   `json:"version"`
	Data          any      `json:"data"`
	Warnings      []string `json:"warnings"`
	Errors        []Error  `json:"errors"`
}

// Error is one entry of errors[].
type Error struct {
	Code    apperr.Code    `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// New starts an envelope for a command. commandID is the command
// with its mode flags, e.g. "deploy --apply"; its words form command_path.
func New(command, commandID string) *Envelope {
	if commandID == "" {
		commandID = command
	}
	return &Envelope{SchemaVersion: SchemaVersion, Command: command, CommandID: commandID,
		CommandPath: strings.Fields(commandID), Version: Version, Data: map[string]any{},
		Warnings: []string{}, Errors: []Error{}}
}

// Succeed sets data and ok=true.
func (e *Envelope) Succeed(data any, warnings []string) *Envelope {
	e.OK, e.Data = true, data
	e.addWarnings(warnings)
	return e
}

// Fail records err; data becomes {}.
func (e *Envelope) Fail(err error, warnings []string) *Envelope {
	e.OK, e.Data = false, map[string]any{}
	e.addWarnings(warnings)
	ae := apperr.As(err)
	details := map[string]any{}
	for k, v := range ae.Details {
		details[k] = v
	}
	addPosixTwins(details)
	if ae.Hint != "" {
		details["hint"] = ae.Hint
	}
	if _, ok := details["reason_code"]; !ok {
		details["reason_code"] = strings.ToLower(strings.TrimPrefix(string(ae.Code), "E_"))
	}
	if _, ok := details["next_actions"]; !ok {
		details["next_actions"] = []string{}
	}
	msg := ae.Message
	if ae.Code == apperr.Unexpected && ae.Err != nil {
		msg = ae.Err.Error()
	}
	e.Errors = append(e.Errors, Error{Code: ae.Code, Message: msg, Details: details})
	return e
}

func (e *Envelope) addWarnings(ws []string) {
	for _, w := range ws {
		if !slices.Contains(e.Warnings, w) {
			e.Warnings = append(e.Warnings, w)
		}
	}
}

// JSON renders the envelope with two-space indent and a trailing newline.
func (e *Envelope) JSON() []byte {
	var buf bytes.Buffer
	_ = e.Encode(&buf)
	return buf.Bytes()
}

// Encode writes the envelope to w as [Envelope.JSON] renders it, without
// building the whole document first: the long arrays of data (the changes
// of a plan of ten thousand files) are encoded element by element
// ([jsonstream]) straight to w, a buffered stdout. A value that cannot be
// encoded is normally found before the first byte is written, and the
// envelope of an E_UNEXPECTED error is written instead; an error of w is
// returned.
func (e *Envelope) Encode(w io.Writer) error {
	tw := &touchedWriter{w: w}
	err := jsonstream.Encode(tw, e, encoding)
	if err != nil && !tw.touched {
		fallback := New(e.Command, e.CommandID).Fail(apperr.Wrap(err, apperr.Unexpected, "cannot encode result"), nil)
		return jsonstream.Encode(w, fallback, encoding)
	}
	return err
}

// encoding indents by two spaces and leaves &, < and > as they are
// (source specs contain '&'; \u0026 is valid but unreadable).
var encoding = jsonstream.Options{Indent: "  "}

// touchedWriter tells whether anything was written to w: jsonstream
// encodes the document (long arrays cut short) before its first write, so
// an error with nothing written is an encoding error, not one of w.
type touchedWriter struct {
	w       io.Writer
	touched bool
}

func (t *touchedWriter) Write(p []byte) (int, error) {
	t.touched = true
	return t.w.Write(p)
}

// pathKey matches the detail keys that name paths (path, paths, root,
// link, module_root, journal, …).
var pathKey = lazyregexp.New(`(^|_)(path|paths|root|roots|dir|link|journal|file|repo|checkout|project|home)$`)

// addPosixTwins gives every path field of details (an absolute path, or a
// list of them, under a key that names a path) its '/'-separated twin under
// <key>_posix, as SPEC §7 asks, unless the error set one already.
func addPosixTwins(details map[string]any) {
	for k, v := range details {
		if !pathKey.MatchString(k) {
			continue
		}
		if _, ok := details[k+"_posix"]; ok {
			continue
		}
		switch v := v.(type) {
		case string:
			if filepath.IsAbs(v) {
				details[k+"_posix"] = filepath.ToSlash(v)
			}
		case []string:
			if len(v) > 0 && !slices.ContainsFunc(v, func(p string) bool { return !filepath.IsAbs(p) }) {
				twins := make([]string, len(v))
				for i, p := range v {
					twins[i] = filepath.ToSlash(p)
				}
				details[k+"_posix"] = twins
			}
		}
	}
}
