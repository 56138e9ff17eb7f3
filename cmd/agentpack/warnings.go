package main

import "github.com/agentpack/agentpack/engine"

// warningsOf keeps the warnings gathered before a failure.
func warningsOf(st *engine.State) *result {
	if st == nil {
		return nil
	}
	return &result{Warnings: st.Warnings}
}
