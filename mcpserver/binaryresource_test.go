package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestBinaryModuleFiles checks that a module file that is not UTF-8 text
// is served byte for byte: a blob from resources/read, base64 with
// encoding "base64" from the resources tool, with a binary MIME type in
// both and in resources/list. Text files stay text.
func TestBinaryModuleFiles(t *testing.T) {
	te := newTestEnv(t)
	skill := filepath.Join(te.Repo, "modules", "skills", "release-notes")
	files := map[string]struct {
		data []byte
		mime string
	}{
		"assets/logo.png": {[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"), "image/png"},
		"data/blob.bin":   {[]byte("ab\x00cd"), "application/octet-stream"}, // UTF-8 but a NUL
		"data/latin1.txt": {[]byte("caf\xe9 cr\xe8me\n"), "application/octet-stream"},
		"data/notes.md":   {[]byte("# Caf\u00e9\n"), "text/markdown"},
	}
	for name, f := range files {
		p := filepath.Join(skill, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, te.server(t), "2025-11-25")

	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, r := range res.Resources {
		listed[r.URI] = r.MIMEType
	}
	for name, f := range files {
		uri := moduleURI("skill:release-notes", name)
		binary := f.mime != "text/markdown"
		if listed[uri] != f.mime {
			t.Errorf("list %s: mime %q, want %q", uri, listed[uri], f.mime)
		}

		c, err := readURI(t, cs, uri)
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if c.MIMEType != f.mime {
			t.Errorf("read %s: mime %q, want %q", uri, c.MIMEType, f.mime)
		}
		if binary && (c.Text != "" || !bytes.Equal(c.Blob, f.data)) {
			t.Errorf("read %s: want blob %q and no text, got text %q blob %q", uri, f.data, c.Text, c.Blob)
		}
		if !binary && (c.Text != string(f.data) || c.Blob != nil) {
			t.Errorf("read %s: want text %q and no blob, got text %q blob %q", uri, f.data, c.Text, c.Blob)
		}

		env := callTool(t, cs, "resources", M{"action": "read", "uri": uri})
		if !env.OK || env.Data["mime_type"] != f.mime {
			t.Fatalf("resources tool read %s: want mime %q: %s", uri, f.mime, env.raw)
		}
		text, _ := env.Data["text"].(string)
		if binary {
			got, err := base64.StdEncoding.DecodeString(text)
			if env.Data["encoding"] != "base64" || err != nil || !bytes.Equal(got, f.data) {
				t.Errorf("resources tool read %s: want the base64 of %q with encoding base64: %s", uri, f.data, env.raw)
			}
		} else if _, ok := env.Data["encoding"]; ok || text != string(f.data) {
			t.Errorf("resources tool read %s: want plain text %q: %s", uri, f.data, env.raw)
		}
	}
}

// TestBinaryModuleFileWire checks the JSON-RPC answer of resources/read
// for a binary file: a base64 "blob" and no "text" with U+FFFD in it.
func TestBinaryModuleFileWire(t *testing.T) {
	te := newTestEnv(t)
	data := []byte("\xff\xd8\xff\xe0\x00\x10JFIF")
	if err := os.WriteFile(filepath.Join(te.Repo, "modules", "skills", "release-notes", "photo.jpg"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := te.server(t)
	res, err := s.readResource(context.Background(), "agentpack://modules/skill:release-notes/photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Contents []map[string]any `json:"contents"`
	}
	if err := json.Unmarshal(b, &wire); err != nil || len(wire.Contents) != 1 {
		t.Fatalf("%s: %v", b, err)
	}
	c := wire.Contents[0]
	if _, ok := c["text"]; ok || c["blob"] != base64.StdEncoding.EncodeToString(data) || c["mimeType"] != "image/jpeg" {
		t.Fatalf("wire contents = %s", b)
	}
}
