package aampkg

import "github.com/agentpack/agentpack/internal/apperr"

// Extract reads an .aam archive in memory, refusing hostile input (absolute
// paths, "..", links, devices, duplicates, size and count limits) before the
// caller writes anything.
func Extract(archive []byte, lim Limits) (*Archive, error) {
	return nil, apperr.New(apperr.Unexpected, "extract is not implemented yet")
}
