package engine

import (
	"sync"

	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/engine/registry/local"
	"github.com/agentpack/agentpack/engine/registry/oci"
)

var ociWired sync.Once

// wireRegistries makes registry.Open handle local registries and
// oci:// registries ([[registries]] entries of type "local" and "oci").
// Called from [New]; no init.
func wireRegistries() {
	ociWired.Do(func() {
		registry.Register(local.Type, local.Open)
		registry.Register(oci.Type, oci.Open)
	})
}
