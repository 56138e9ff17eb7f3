package engine

import (
	"sync"

	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/engine/registry/oci"
)

var ociWired sync.Once

// wireOCIRegistries makes registry.Open handle oci:// registries
// ([[registries]] entries of type "oci"). Called from [New]; no init.
func wireOCIRegistries() {
	ociWired.Do(func() { registry.Register(oci.Type, oci.Open) })
}
