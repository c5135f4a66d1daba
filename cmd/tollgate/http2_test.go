package main_test

import (
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// HTTP/2 on both sides of the gateway: to an https:// upstream (as the
// providers' APIs speak it: the lean HTTP/1.1 client hands https to Go's,
// which negotiates h2) and, with server.h2c, to clients that speak it
// without TLS; an http:// upstream is served HTTP/1.1 by the lean client,
// and the same answer streams through every combination.
func TestHTTP2BothSides(t *testing.T) {
	bin := buildBinary(t)
	events := upstreamtest.Events("anthropic_stream.sse")
	reply := func(upstreamtest.Received) upstreamtest.Reply { return upstreamtest.Reply{Events: events} }
	h2 := upstreamtest.NewTLS(reply)
	defer h2.Close()
	h1 := upstreamtest.New(reply)
	defer h1.Close()

	// The tollgate process trusts the fake upstream's certificate.
	certFile := filepath.Join(t.TempDir(), "upstream.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h2.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
	os.WriteFile(cfg, []byte(`
server: { h2c: true }
auth: { master_key: `+mk+` }
providers:
  - { name: tls, type: anthropic, base_url: "`+h2.URL+`", api_key: up }
  - { name: plain, type: anthropic, base_url: "`+h1.URL+`", api_key: up }
  - { name: std, type: anthropic, base_url: "`+h1.URL+`", api_key: up, http_client: net/http }
models:
  - { name: over-h2, targets: [ { provider: tls, model: claude-x } ] }
  - { name: over-h1, targets: [ { provider: plain, model: claude-x } ] }
  - { name: over-std, targets: [ { provider: std, model: claude-x } ] }
`), 0o600)
	s := startServe(t, bin, []string{"SSL_CERT_FILE=" + certFile}, "--config", cfg, "--addr", "127.0.0.1:0")

	h2c := &http.Client{Transport: &http.Transport{Protocols: unencryptedHTTP2()}}
	h1c := &http.Client{Transport: &http.Transport{}}
	want := strings.Join(func() []string {
		var out []string
		for _, e := range events {
			out = append(out, string(e))
		}
		return out
	}(), "")
	for _, tc := range []struct {
		name      string
		client    *http.Client
		clientH2  bool
		model     string
		up        *upstreamtest.Server
		upstreamH string
	}{
		{"h2c client, h2 upstream", h2c, true, "over-h2", h2, "HTTP/2.0"},
		{"h1 client, h2 upstream", h1c, false, "over-h2", h2, "HTTP/2.0"},
		{"h2c client, lean h1 upstream", h2c, true, "over-h1", h1, "HTTP/1.1"},
		{"h1 client, net/http h1 upstream", h1c, false, "over-std", h1, "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", "http://"+s.addr+"/v1/messages",
				strings.NewReader(`{"model":"`+tc.model+`","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]}`))
			req.Header.Set("x-api-key", mk)
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := tc.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %v: %s\n%s", resp.StatusCode, err, body, s.stderrText())
			}
			if got := resp.ProtoMajor == 2; got != tc.clientH2 {
				t.Errorf("client side %s, want HTTP/2 %v", resp.Proto, tc.clientH2)
			}
			if string(body) != want {
				t.Errorf("stream not relayed byte for byte:\n got %q\nwant %q", body, want)
			}
			if p := tc.up.Last().Proto; p != tc.upstreamH {
				t.Errorf("upstream side %s, want %s", p, tc.upstreamH)
			}
		})
	}

	// Without server.h2c an HTTP/2 client without TLS is not served.
	cfg2 := filepath.Join(t.TempDir(), "tollgate.yaml")
	os.WriteFile(cfg2, []byte(`
auth: { master_key: `+mk+` }
providers: [ { name: plain, type: anthropic, base_url: "`+h1.URL+`", api_key: up } ]
models: [ { name: over-h1, targets: [ { provider: plain, model: claude-x } ] } ]
`), 0o600)
	s2 := startServe(t, bin, nil, "--config", cfg2, "--addr", "127.0.0.1:0")
	noH2c := &http.Client{Transport: &http.Transport{Protocols: unencryptedHTTP2()}}
	if resp, err := noH2c.Get("http://" + s2.addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("h2c off: an HTTP/2 client was served (%s)", resp.Proto)
	}
}

func unencryptedHTTP2() *http.Protocols {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &p
}
