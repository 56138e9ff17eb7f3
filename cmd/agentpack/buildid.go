package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/agentpack/agentpack/internal/envelope"
)

// buildID identifies this agentpack binary for the source cache: its
// version and its executable's size and modification time, so a rebuilt
// binary (other adapters, other rules) never reuses a state compiled by
// another one.
var buildID = sync.OnceValue(func() string {
	id := envelope.Version
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			id += fmt.Sprintf(" %s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return id
})
