module github.com/agentpack/agentpack

go 1.26.8

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/gofrs/flock v0.13.1 // indirect
	github.com/google/renameio/v2 v2.0.2 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/schollz/progressbar/v3 v3.19.1 // indirect
	github.com/sergi/go-diff v1.4.0 // indirect
	github.com/tailscale/hujson v0.0.0-20260727124030-b80ff77dac4f // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/term v0.44.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
