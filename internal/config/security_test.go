package config

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://api.example.com/v1", "https://api.example.com/v1"},
		{"https://user:s3cret@proxy.example.com/v1", "https://user:****@proxy.example.com/v1"},
		{"https://user@proxy.example.com/v1", "https://user@proxy.example.com/v1"},
		{"https://:s3cret@host", "https://:****@host"},
		{"postgres://tollgate:pa%40ss@db:5432/t?sslmode=require", "postgres://tollgate:****@db:5432/t?sslmode=require"},
		{"postgres://db/t?password=s3cret&sslmode=disable", "postgres://db/t?password=****&sslmode=disable"},
		{"https://h/v1?api_key=s3cret&x=1&Token=t0k&sig=abc&key=", "https://h/v1?api_key=****&x=1&Token=****&sig=****&key="},
		{"redis://:s3cret@cache:6379/0", "redis://:****@cache:6379/0"},
		// Not a URL to url.Parse: the user information is still hidden.
		{"https://user:s3 cret@host/v1", "https://user:****@host/v1"},
		{"https://user:s3cret@ho st/v1", "https://user:****@ho st/v1"},
		{"not a url", "not a url"},
	}
	for _, tc := range tests {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A secret in a URL never reaches a validation error.
func TestErrorsDoNotQuoteSecrets(t *testing.T) {
	for _, yaml := range []string{
		"providers: [ { name: o, type: openai, base_url: \"https://u:hunter2hunter2@x/v1?key=hunter2hunter2\" } ]\nmodels: [ { name: m, targets: [ { provider: o, model: x } ] } ]\n",
		"providers: [ { name: o, type: openai, base_url: \"ftp://u:hunter2hunter2@x\" } ]\nmodels: [ { name: m, targets: [ { provider: o, model: x } ] } ]\n",
		"providers: [ { name: o, type: openai, base_url: \"https://u:hunter2hunter2@x:port\" } ]\nmodels: [ { name: m, targets: [ { provider: o, model: x } ] } ]\n",
		"database: { url: \"mysql://u:hunter2hunter2@db/x\" }\n" + minimal,
		"redis: { url: \"http://u:hunter2hunter2@r:6379\" }\n" + minimal,
		"tracing: { otlp_endpoint: \"grpc://u:hunter2hunter2@otel:4317\" }\n" + minimal,
	} {
		_, err := Parse([]byte(yaml), env(nil))
		if err == nil {
			t.Errorf("no error for %s", yaml)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error quotes a secret: %v", err)
		}
	}
}

func TestMasterKeyLength(t *testing.T) {
	for _, tc := range []struct {
		key, want string
	}{
		{"x", "auth.master_key: is 1 characters long; at least 32 are required (generate one with: openssl rand -hex 32)"},
		{strings.Repeat("k", 31), "at least 32"},
		{" " + testMaster, "white space"},
		{testMaster, ""},
		{"", ""}, // none: serve generates one, or reads TOLLGATE_MASTER_KEY
	} {
		_, err := Parse([]byte("auth: { master_key: \""+tc.key+"\" }\n"+minimal), env(nil))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("master key %q: %v", tc.key, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("master key %q: error %v, want %q", tc.key, err, tc.want)
		}
	}
	if err := CheckMasterKey("short"); err == nil || !strings.Contains(err.Error(), "openssl rand -hex 32") {
		t.Errorf("CheckMasterKey(short) = %v", err)
	}
}

func TestServerAndSecurityDefaults(t *testing.T) {
	c, err := Parse([]byte(minimal), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server
	if s.ReadHeaderTimeout != 10*time.Second || s.ReadTimeout != time.Minute || s.IdleTimeout != 2*time.Minute || s.MaxHeaderBytes != 64<<10 {
		t.Errorf("server defaults: %+v", s)
	}
	if c.Metrics.Auth != MetricsAuthMasterKey || c.Metrics.Addr != "" {
		t.Errorf("metrics defaults: %+v (want behind the master key)", c.Metrics)
	}
	if c.Auth.Failures() != 20 || c.Auth.FailureWindow != time.Minute || len(c.Auth.Proxies()) != 0 {
		t.Errorf("auth throttle defaults: %+v", c.Auth)
	}
	if d := Default(); d.Server.ReadTimeout != DefaultReadTimeout || d.Metrics.Auth != MetricsAuthMasterKey {
		t.Errorf("Default(): %+v %+v", d.Server, d.Metrics)
	}

	c, err = Parse([]byte(`server: { read_header_timeout: 5s, read_timeout: 2m, idle_timeout: 30s, max_header_bytes: 16384 }
auth: { max_failures: 0, failure_window: 5m, trusted_proxies: ["10.0.0.0/8", "192.168.1.7", "fd00::/8"] }
metrics: { addr: "127.0.0.1:9100", auth: none }
`+minimal), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Server; s.ReadHeaderTimeout != 5*time.Second || s.ReadTimeout != 2*time.Minute || s.IdleTimeout != 30*time.Second || s.MaxHeaderBytes != 16384 {
		t.Errorf("server: %+v", s)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("fd00::/8")}
	if c.Auth.Failures() != 0 || c.Auth.FailureWindow != 5*time.Minute || !slices.Equal(c.Auth.Proxies(), want) {
		t.Errorf("auth: %+v %v", c.Auth, c.Auth.Proxies())
	}
	if c.Metrics.Addr != "127.0.0.1:9100" || c.Metrics.Auth != MetricsAuthNone {
		t.Errorf("metrics: %+v", c.Metrics)
	}

	for _, bad := range []struct{ yaml, want string }{
		{"server: { read_timeout: -1s }", "server.read_timeout: must not be negative"},
		{"server: { read_header_timeout: 2m, read_timeout: 1m }", "server.read_header_timeout"},
		{"server: { max_header_bytes: 100 }", "server.max_header_bytes"},
		{"auth: { max_failures: -1 }", "auth.max_failures"},
		{"auth: { trusted_proxies: [\"proxy.local\"] }", "auth.trusted_proxies[0]"},
		{"metrics: { auth: basic }", "metrics.auth"},
		{"metrics: { addr: nowhere }", "metrics.addr"},
		{"server: { addr: \"127.0.0.1:8080\" }\nmetrics: { addr: \"127.0.0.1:8080\" }", "metrics.addr"},
	} {
		if _, err := Parse([]byte(bad.yaml+"\n"+minimal), env(nil)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want %q", bad.yaml, err, bad.want)
		}
	}
}

func TestAnthropicBetas(t *testing.T) {
	c, err := Parse([]byte(`providers:
  - { name: ant, type: anthropic, api_key: k, anthropic_betas: [files-api-2025-04-14, context-1m-2025-08-07] }
  - { name: open, type: anthropic, api_key: k }
models:
  - { name: a, targets: [ { provider: ant, model: x } ], anthropic_betas: [files-api-2025-04-14] }
  - { name: b, targets: [ { provider: open, model: x } ] }
  - { name: c, targets: [ { provider: open, model: x } ], anthropic_betas: [] }
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	a, b, none := &c.Models[0], &c.Models[1], &c.Models[2]
	ant := c.ProviderByName("ant")
	if !a.AllowBeta("files-api-2025-04-14") || !a.AllowBeta("FILES-API-2025-04-14") || a.AllowBeta("context-1m-2025-08-07") {
		t.Error("model list not applied")
	}
	if !b.AllowBeta("anything-2099-01-01") || !c.ProviderByName("open").AllowBeta("anything") {
		t.Error("without a list every beta is allowed")
	}
	if none.AllowBeta("files-api-2025-04-14") {
		t.Error("an empty list allows nothing")
	}

	sent := []string{"files-api-2025-04-14, context-1m-2025-08-07", "token-efficient-tools-2025-02-19"}
	kept, dropped := FilterBetas(sent, a.AllowBeta, ant.AllowBeta)
	if !slices.Equal(kept, []string{"files-api-2025-04-14"}) || !slices.Equal(dropped, []string{"context-1m-2025-08-07", "token-efficient-tools-2025-02-19"}) {
		t.Errorf("FilterBetas = %q, dropped %q", kept, dropped)
	}
	if kept, dropped := FilterBetas(sent, b.AllowBeta); !slices.Equal(kept, sent) || dropped != nil {
		t.Errorf("nothing to drop: %q %q", kept, dropped)
	}
	if kept, _ := FilterBetas(sent, none.AllowBeta); kept != nil {
		t.Errorf("nothing allowed: %q, want the header left out", kept)
	}
	if kept, dropped := FilterBetas(nil, a.AllowBeta); kept != nil || dropped != nil {
		t.Errorf("no header: %q %q", kept, dropped)
	}

	for _, bad := range []string{`anthropic_betas: ["files api"]`, `anthropic_betas: [""]`, `anthropic_betas: ["a,b"]`} {
		_, err := Parse([]byte("providers: [ { name: demo, type: echo } ]\nmodels:\n  - name: m\n    targets: [ { provider: demo } ]\n    "+bad+"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), "models[0].anthropic_betas[0]") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
