// Package oci stores agentpack packages in any OCI registry (GHCR, Harbor,
// Zot, distribution) through oras-go.
//
// A registry URL is oci://host[:port]/namespace. Each package version is one
// OCI artifact in the repository <namespace>/<disk-name> (see [RepoName]),
// tagged with its version (build metadata mapped by [VersionTag]); its
// manifest is built by [PackageManifest] from the archive and the package
// manifest alone, so the same package has the same manifest digest in every
// namespace and on every machine. Search reads the index artifact
// <namespace>/agentpack-index:latest, which publish updates and which is
// rebuilt from the tag lists when it is missing or stale.
//
// Credentials come from AGENTPACK_REGISTRY_TOKEN or the Docker credential
// store ([Credentials]); plain HTTP is used for loopback hosts only
// ([IsLoopback]). Every failure is an apperr with a stable code, and no
// message ever carries a secret.
package oci
