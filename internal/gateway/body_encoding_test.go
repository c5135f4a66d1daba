package gateway_test

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func gzipped(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
}

// TestCompressedRequestBodies: a gzip body is read decompressed, bounded
// by max_body_bytes after decompression; other codings get 415.
func TestCompressedRequestBodies(t *testing.T) {
	e := newEnv(t, nil, nil, "")
	const msg = `{"model":"echo","max_tokens":50,"messages":[{"role":"user","content":"squeezed"}]}`
	tests := []struct {
		name, body, encoding string
		status               int
		want                 string // in the body
	}{
		{"gzip", gzipped(msg), "gzip", 200, "squeezed"},
		{"gzip, upper case", gzipped(msg), "GZIP", 200, "squeezed"},
		{"identity", msg, "identity", 200, "squeezed"},
		{"gzip bomb over the limit", gzipped(`{"model":"echo","messages":[{"role":"user","content":"` + strings.Repeat("a", 1<<20) + `"}]}`), "gzip", 413, "larger than the gateway's limit"},
		{"not gzip data", msg, "gzip", 400, "not gzip data"},
		{"cut short", gzipped(msg)[:30], "gzip", 400, "corrupt or cut short"},
		{"brotli", msg, "br", 415, "content-encoding br is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.do("POST", "/v1/messages", tt.body, append([]string{"Content-Encoding: " + tt.encoding}, anthropicAuth...)...)
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
				t.Fatalf("%d %s; want %d with %q", resp.StatusCode, body, tt.status, tt.want)
			}
			if tt.status != 200 && gjson.GetBytes(body, "type").String() != "error" {
				t.Errorf("not an Anthropic error envelope: %s", body)
			}
		})
	}
}
