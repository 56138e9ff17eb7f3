package oci

// Temporary copies of the engine/registry types until pkg-author's commit lands.

type VersionInfo struct {
	Version      string
	Published    string
	Checksum     string
	Size         int64
	Dependencies map[string]string
	Digest       string
}

type PackageInfo struct {
	Name, Description, Author, License, Repository string
	Keywords                                       []string
	DistTags                                       map[string]string
	Versions                                       []VersionInfo
	ArtifactTypes                                  []string
}

type Hit struct {
	Name, Version, Description, Author string
	ArtifactTypes                      []string
	Keywords                           []string
}
