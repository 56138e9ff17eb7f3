package mcpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestBearerSchemeCaseInsensitive: the auth scheme of an Authorization
// header is case-insensitive (RFC 9110 §11.1), so clients or proxies that
// send "bearer <token>" with the right token are let in; a wrong token or
// another scheme is still 401.
func TestBearerSchemeCaseInsensitive(t *testing.T) {
	te := newTestEnv(t)
	srv := httptest.NewServer(te.server(t).HTTPHandler(HTTPOptions{BearerToken: "sekrit"}))
	defer srv.Close()
	for _, auth := range []string{"bearer sekrit", "BEARER sekrit", "Bearer  sekrit "} {
		resp := postJSON(t, srv.URL+"/mcp", []byte(initLine), map[string]string{"Authorization": auth})
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("Authorization %q with the right token: status %d: %s", auth, resp.StatusCode, b)
		}
	}
	for _, auth := range []string{"bearer nope", "Basic sekrit", "sekrit", "Bearersekrit", "Bearer", "bearer sekrit2"} {
		resp := postJSON(t, srv.URL+"/mcp", []byte(initLine), map[string]string{"Authorization": auth})
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
}
