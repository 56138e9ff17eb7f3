package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

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

// TestOCIRegistryScripts runs testdata/oci: the registry, publish, search
// and info commands against an in-process OCI registry (ocireg). The
// scripts skip until the package commands they drive exist
// ([packagecmds]).
func TestOCIRegistryScripts(t *testing.T) {
	p := scriptParams("testdata/oci")
	p.Cmds["ocireg"] = cmdOCIRegistry
	next := p.Condition
	p.Condition = func(cond string) (bool, error) {
		if cond == "packagecmds" {
			return cliHasCommands("registry add", "registry list", "publish", "search", "info"), nil
		}
		if next != nil {
			return next(cond)
		}
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	testscript.Run(t, p)
}

// cliHasCommands reports whether `agentpack help --json` lists every id.
func cliHasCommands(ids ...string) bool {
	var out bytes.Buffer
	Main([]string{"help", "--json"}, strings.NewReader(""), &out, io.Discard)
	var env struct {
		Data struct {
			Commands []struct {
				ID string `json:"id"`
			} `json:"commands"`
		} `json:"data"`
	}
	if json.Unmarshal(out.Bytes(), &env) != nil {
		return false
	}
	have := map[string]bool{}
	for _, c := range env.Data.Commands {
		have[c.ID] = true
	}
	for _, id := range ids {
		if !have[id] {
			return false
		}
	}
	return true
}
