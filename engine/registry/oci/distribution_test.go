package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/agentpack/agentpack/internal/apperr"
)

// The real-registry tests run Debian's docker-registry (CNCF distribution)
// on 127.0.0.1 and check what publish pushed from the outside with skopeo.
// .ci/run installs both (and apache2-utils for htpasswd); without them the
// tests skip and say so.

// needBinaries skips the test unless every binary is on PATH.
func needBinaries(t *testing.T, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed, so the real-registry test is skipped (on Debian: apt-get install docker-registry skopeo apache2-utils; .ci/run does this)", b)
		}
	}
}

// startDistribution runs docker-registry on a free loopback port with a
// temp config and storage, with htpasswd auth when htpasswdLine is set.
func startDistribution(t *testing.T, htpasswdLine string) string {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, filepath.Join(dir, "data"), addr)
	if htpasswdLine != "" {
		hp := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(hp, []byte(htpasswdLine), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += fmt.Sprintf("auth:\n  htpasswd:\n    realm: agentpack-test\n    path: %s\n", hp)
	}
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command("docker-registry", "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(15 * time.Second); ; {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry did not start on %s: %v\n%s", addr, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return addr
}

// skopeo runs skopeo against the loopback registry (no TLS) and returns stdout.
func skopeo(t *testing.T, creds string, args ...string) []byte {
	t.Helper()
	full := append([]string{args[0], "--tls-verify=false"}, args[1:]...)
	if creds != "" {
		full = append([]string{args[0], "--creds", creds}, full[1:]...)
	}
	cmd := exec.Command("skopeo", full...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("skopeo %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

func TestDistributionRegistry(t *testing.T) {
	needBinaries(t, "docker-registry", "skopeo")
	addr := startDistribution(t, "")
	checkAgainstRealRegistry(t, addr, nil, "")
}

func TestDistributionRegistryWithHtpasswd(t *testing.T) {
	needBinaries(t, "docker-registry", "skopeo", "htpasswd")
	line, err := exec.Command("htpasswd", "-Bbn", testUser, testPass).Output()
	if err != nil {
		t.Fatal(err)
	}
	addr := startDistribution(t, strings.TrimSpace(string(line))+"\n")

	_, err = open(t, "oci://"+addr+"/ns", nil).Package(context.Background(), "kit")
	wantCode(t, err, apperr.RegistryAuthRequired)
	_, err = open(t, "oci://"+addr+"/ns", env{EnvToken: "wrong-password", EnvUsername: testUser}).Index(context.Background())
	e := wantCode(t, err, apperr.RegistryAuthRequired)
	noSecret(t, e, "wrong-password")

	checkAgainstRealRegistry(t, addr, env{"DOCKER_CONFIG": writeDockerConfig(t, basicAuths(addr, testUser, testPass))}, testUser+":"+testPass)
}

// checkAgainstRealRegistry publishes, reads back, and has skopeo confirm
// the artifact, its tags and its digest.
func checkAgainstRealRegistry(t *testing.T, addr string, e env, creds string) {
	ctx := context.Background()
	r := open(t, "oci://"+addr+"/team/agentpack", e)
	if err := r.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	v1 := publish(t, r, "@acme/review-kit", "1.0.0", "")
	publish(t, r, "@acme/review-kit", "1.1.0+build.7", "")
	meta, archive := testMeta("@acme/review-kit", "1.0.0")
	_, err := r.PublishMeta(ctx, archive, meta, "")
	wantCode(t, err, apperr.PackageVersionExists)

	info, err := r.Package(ctx, "@acme/review-kit")
	if err != nil || len(info.Versions) != 2 || info.DistTags["latest"] != "1.1.0+build.7" {
		t.Fatalf("package: %v %+v", err, info)
	}
	data, _, err := r.Download(ctx, "@acme/review-kit", v1.Digest)
	if err != nil || !bytes.Equal(data, archive) {
		t.Fatalf("download by digest: %v", err)
	}
	hits, err := r.Index(ctx)
	if err != nil || len(hits) != 1 || hits[0].Version != "1.1.0+build.7" {
		t.Fatalf("index: %v %+v", err, hits)
	}

	// From the outside: the tags, the manifest bytes and their digest.
	ref := "docker://" + addr + "/team/agentpack/acme--review-kit"
	var tags struct{ Tags []string }
	if err := json.Unmarshal(skopeo(t, creds, "list-tags", ref), &tags); err != nil {
		t.Fatal(err)
	}
	slices.Sort(tags.Tags)
	if want := []string{"1.0.0", "1.1.0_build.7", "latest"}; !slices.Equal(tags.Tags, want) {
		t.Errorf("skopeo list-tags: %v, want %v", tags.Tags, want)
	}
	raw := skopeo(t, creds, "inspect", "--raw", ref+":1.0.0")
	if got := digest.FromBytes(raw).String(); got != v1.Digest {
		t.Errorf("skopeo sees digest %s, publish reported %s", got, v1.Digest)
	}
	var m struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
		ArtifactType  string `json:"artifactType"`
		Config        struct{ MediaType string }
		Layers        []struct {
			MediaType string
			Digest    string
			Size      int64
		}
		Annotations map[string]string
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != 2 || m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.ArtifactType != ArtifactType ||
		m.Config.MediaType != "application/vnd.oci.empty.v1+json" || len(m.Layers) != 1 || m.Layers[0].MediaType != LayerMediaType ||
		m.Layers[0].Digest != v1.Checksum || m.Annotations["org.opencontainers.image.version"] != "1.0.0" {
		t.Errorf("skopeo sees a manifest that is not the agentpack artifact: %s", raw)
	}
	latest, build := skopeo(t, creds, "inspect", "--raw", ref+":latest"), skopeo(t, creds, "inspect", "--raw", ref+":1.1.0_build.7")
	if !bytes.Equal(latest, build) || digest.FromBytes(latest).String() != info.Versions[1].Digest {
		t.Errorf("latest is not the 1.1.0+build.7 manifest %s:\n%s", info.Versions[1].Digest, latest)
	}
	idx := skopeo(t, creds, "inspect", "--raw", "docker://"+addr+"/team/agentpack/agentpack-index:latest")
	if !bytes.Contains(idx, []byte(IndexArtifactType)) {
		t.Errorf("index artifact: %s", idx)
	}
}
