# Convenience recipes; CI runs .ci/run.

# Build the agentpack binary into ./bin: static (no cgo), as released. A
# cgo build works the same, and starts about 3 ms later with 1.5 MiB more
# memory: the C library is loaded before main.
build:
    CGO_ENABLED=0 go build -o bin/agentpack ./cmd/agentpack

# Run every test (the README's test command)
test:
    go test ./...

# gofmt + go vet
lint:
    test -z "$(gofmt -l .)"
    go vet ./...

# Benchmarks behind the README's performance numbers
bench:
    go test -run '^$' -bench . -benchmem ./engine/ ./engine/resolve/ ./engine/registry/ ./snapshots/ ./engine/lockfile/ ./mcpserver/ ./cmd/agentpack/

# The package benchmarks alone (resolve, install from a local registry, search)
bench-packages:
    go test -run '^$' -bench 'Install100|Search10k' -benchmem -benchtime 5x -count 3 ./engine/
    go test -run '^$' -bench 'Resolve500x5|Rank10k' -benchmem -count 3 ./engine/resolve/ ./engine/registry/

# Regenerate testscript goldens (review the diff before committing!)
update-goldens:
    AGENTPACK_UPDATE_SCRIPTS=1 go test ./cmd/agentpack/

# Side-by-side timings against sha256sum, cp -r and rm -rf (ratios, peak RSS)
bench-compare *sizes:
    bench/run.sh {{sizes}}
