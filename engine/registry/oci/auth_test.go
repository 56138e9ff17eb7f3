package oci

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// writeDockerConfig writes a Docker config.json into a new DOCKER_CONFIG folder.
func writeDockerConfig(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func basicAuths(host, user, pass string) string {
	return `{"auths":{"` + host + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)) + `"}}}`
}

// noSecret fails when err's message, hint or details show the secret.
func noSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	e := apperr.As(err)
	all := e.Error() + " " + e.Hint
	for k, v := range e.Details {
		all += " " + k + "=" + strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(toString(v), "\n", " "), "\t", " "))
	}
	for _, s := range secrets {
		if strings.Contains(all, s) || strings.Contains(all, base64.StdEncoding.EncodeToString([]byte(testUser+":"+s))) {
			t.Errorf("the error shows a secret: %s", all)
		}
	}
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func TestAuthChallenges(t *testing.T) {
	for _, mode := range []authMode{authBasic, authToken} {
		name := map[authMode]string{authBasic: "basic", authToken: "token"}[mode]
		t.Run(name, func(t *testing.T) {
			reg := startRegistry(t, mode)
			url := "oci://" + reg.Host + "/private"
			ctx := context.Background()

			// Missing credentials: E_REGISTRY_AUTH_REQUIRED, reason credentials_missing.
			r := open(t, url, nil)
			e := wantCode(t, r.Ping(ctx), apperr.RegistryAuthRequired)
			if e.Details["reason_code"] != "credentials_missing" || !strings.Contains(e.Hint, "docker login "+reg.Host) {
				t.Errorf("missing credentials: %+v", e)
			}
			_, err := r.Package(ctx, "kit")
			wantCode(t, err, apperr.RegistryAuthRequired)

			// Docker config auths (DOCKER_CONFIG): works.
			r = open(t, url, env{"DOCKER_CONFIG": writeDockerConfig(t, basicAuths(reg.Host, testUser, testPass))})
			if err := r.Ping(ctx); err != nil {
				t.Fatalf("ping with docker login: %v", err)
			}
			publish(t, r, "kit", "1.0.0", "")

			// ~/.docker/config.json when DOCKER_CONFIG is unset: works.
			home := t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".docker"), 0o700); err != nil {
				t.Fatal(err)
			}
			_ = os.WriteFile(filepath.Join(home, ".docker", "config.json"), []byte(basicAuths(reg.Host, testUser, testPass)), 0o600)
			if _, err := open(t, url, env{"HOME": home}).Package(ctx, "kit"); err != nil {
				t.Fatalf("~/.docker/config.json: %v", err)
			}

			// AGENTPACK_REGISTRY_TOKEN (with its user name): works, and wins over Docker's config.
			tokEnv := env{EnvToken: testPass, EnvUsername: testUser, "DOCKER_CONFIG": writeDockerConfig(t, basicAuths(reg.Host, testUser, "wrong-wrong"))}
			if _, _, err := open(t, url, tokEnv).Download(ctx, "kit", "1.0.0"); err != nil {
				t.Fatalf("token: %v", err)
			}

			// Refused credentials: E_REGISTRY_AUTH_REQUIRED, reason credentials_refused, no secret shown.
			bad := "bad-secret-value-123"
			r = open(t, url, env{EnvToken: bad, EnvUsername: testUser})
			_, _, err = r.Download(ctx, "kit", "1.0.0")
			e = wantCode(t, err, apperr.RegistryAuthRequired)
			if e.Details["reason_code"] != "credentials_refused" {
				t.Errorf("refused credentials: %+v", e)
			}
			noSecret(t, err, bad, testPass)
			meta, archive := testMeta("kit", "2.0.0")
			_, err = r.PublishMeta(ctx, archive, meta, "")
			wantCode(t, err, apperr.RegistryAuthRequired)
			noSecret(t, err, bad)
		})
	}
}

func TestCredentialHelperFromDockerConfig(t *testing.T) {
	reg := startRegistry(t, authToken)
	bin := t.TempDir()
	// A Docker credential helper speaks JSON on stdin/stdout.
	script := "#!/bin/sh\nread server\necho '{\"ServerURL\":\"'$server'\",\"Username\":\"" + testUser + "\",\"Secret\":\"" + testPass + "\"}'\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-agentpacktest"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := context.Background()
	for _, cfg := range []string{
		`{"credHelpers":{"` + reg.Host + `":"agentpacktest"}}`,
		`{"credsStore":"agentpacktest"}`,
	} {
		r := open(t, "oci://"+reg.Host+"/ns", env{"DOCKER_CONFIG": writeDockerConfig(t, cfg)})
		if err := r.Ping(ctx); err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
	}
	// A helper that is not installed: E_REGISTRY_AUTH_REQUIRED naming it.
	r := open(t, "oci://"+reg.Host+"/ns", env{"DOCKER_CONFIG": writeDockerConfig(t, `{"credsStore":"absent-helper"}`)})
	e := wantCode(t, r.Ping(ctx), apperr.RegistryAuthRequired)
	if !strings.Contains(e.Message, "docker-credential-absent-helper") {
		t.Errorf("message %q does not name the helper", e.Message)
	}
}
