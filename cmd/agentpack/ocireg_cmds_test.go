package main

import (
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentpack/agentpack/internal/ocitest"
)

// ocireg [none|basic|token]: start an in-process OCI registry for the rest
// of the script and set $OCIREG to its 127.0.0.1:port (basic and token
// accept $OCIREG_USER / $OCIREG_PASSWORD).
func cmdOCIRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: ocireg [none|basic|token]")
	}
	auth := ocitest.None
	if len(args) == 1 {
		switch args[0] {
		case "none":
		case "basic":
			auth = ocitest.Basic
		case "token":
			auth = ocitest.Token
		default:
			ts.Fatalf("ocireg: unknown auth %q", args[0])
		}
	}
	s := ocitest.Start(auth)
	ts.Defer(s.Close)
	ts.Setenv("OCIREG", s.Host)
	ts.Setenv("OCIREG_USER", ocitest.User)
	ts.Setenv("OCIREG_PASSWORD", ocitest.Password)
}
