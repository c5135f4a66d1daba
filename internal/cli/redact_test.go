package cli

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/config"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"ci-key":                  "ci-key",
		"équipe données — 🚀":      "équipe données — 🚀",
		"👨\u200d👩\u200d👧":         "👨\u200d👩\u200d👧", // joiners kept
		"line one\nline two":      `line one\nline two`,
		"\x1b[31mred\x1b[0m":      `\x1b[31mred\x1b[0m`,
		"\x1b]0;pwned\a":          `\x1b]0;pwned\a`,
		"col\tumn":                `col\tumn`,
		"carriage\rreturn":        `carriage\rreturn`,
		"c1 \u009b31m":            `c1 \u009b31m`,
		"evil\u202etxt.exe":       `evil\u202etxt.exe`,
		"bad \xff\xfe utf-8":      `bad \xff\xfe utf-8`,
		"nul\x00":                 `nul\x00`,
		"back\\slash stays as is": "back\\slash stays as is",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func testConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const secretsYAML = `
auth: { master_key: "mk-very-secret-0123456789abcdef0123" }
database: { url: "postgres://tollgate:db-pass-9f8e7d@db.internal:5432/tollgate?sslmode=require" }
redis: { url: "redis://:redis-pass-4c3b2a@cache:6379/0" }
providers:
  - { name: corp, type: openai, base_url: "https://svc:proxy-pass-1a2b3c@llm-proxy.internal/v1", api_key: "sk-upstream-5e6f7a8b" }
  - { name: ant, type: anthropic, api_keys: ["sk-ant-pool-one-111", "sk-ant-pool-two-222"] }
models:
  - { name: m, targets: [ { provider: corp, model: x } ] }
`

var allSecrets = []string{"mk-very-secret", "db-pass-9f8e7d", "redis-pass-4c3b2a", "proxy-pass-1a2b3c", "sk-upstream-5e6f7a8b", "sk-ant-pool-one-111", "sk-ant-pool-two-222"}

// check-config shows URLs without their passwords.
func TestPrintConfigHidesSecrets(t *testing.T) {
	var out bytes.Buffer
	printConfig(&out, testConfig(t, secretsYAML), nil)
	for _, s := range allSecrets {
		if strings.Contains(out.String(), s) {
			t.Errorf("check-config prints %q:\n%s", s, &out)
		}
	}
	for _, want := range []string{"https://svc:****@llm-proxy.internal/v1", "postgres://tollgate:****@db.internal:5432/tollgate?sslmode=require",
		"redis://:****@cache:6379/0", "read_timeout=1m0s", "api_key=…7a8b", "[…-111,…-222]", "metrics: addr=127.0.0.1:8080 (server.addr) auth=master_key", "20 failures per 1m0s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check-config lacks %q:\n%s", want, &out)
		}
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{"": "(none)", "short-key": "****", "sk-0123456789abcdef": "…cdef", "123456789012345": "****"} {
		if got := mask(in); got != want {
			t.Errorf("mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrintConfigMarksFallbacks(t *testing.T) {
	var out bytes.Buffer
	printConfig(&out, testConfig(t, `
providers: [ { name: a, type: echo }, { name: b, type: echo } ]
models: [ { name: m, targets: [ { provider: a, weight: 3 }, { provider: b, fallback: true } ] } ]
`), nil)
	for _, want := range []string{"1. a/m (echo) [weight 3]", "2. b/m (echo) [fallback: only when the others fail]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check-config lacks %q:\n%s", want, &out)
		}
	}
}

// check-config says which providers forward response ids the gateway
// never stored.
func TestPrintConfigMarksForwardedResponseIDs(t *testing.T) {
	var out bytes.Buffer
	printConfig(&out, testConfig(t, `
providers:
  - { name: open, type: openai-responses, api_key: k, forward_unknown_response_ids: true }
  - { name: closed, type: openai-responses, api_key: k }
models: [ { name: m, targets: [ { provider: open, model: x }, { provider: closed, model: x } ] } ]
`), nil)
	for _, line := range strings.Split(out.String(), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if marked := strings.Contains(line, "forward_unknown_response_ids"); (name == "open" || name == "closed") && marked != (name == "open") {
			t.Errorf("provider %s: %q", name, line)
		}
	}
	if !regexp.MustCompile(`(?m)^  open +openai-responses`).MatchString(out.String()) {
		t.Errorf("no provider lines:\n%s", &out)
	}
}

// Warnings and errors never show a configured secret, whoever logs them;
// info lines are left alone.
func TestLogsHideSecrets(t *testing.T) {
	cfg := testConfig(t, secretsYAML)
	var buf bytes.Buffer
	logger := slog.New(redactLogs(slog.NewJSONHandler(&buf, nil), secretReplacer(cfg)))
	upstreamErr := fmt.Errorf("Post %q: dial tcp: connection refused", "https://svc:proxy-pass-1a2b3c@llm-proxy.internal/v1/chat/completions")
	logger.Warn("upstream failed", "error", upstreamErr, "db", cfg.Database.URL, "key", "sk-upstream-5e6f7a8b")
	logger.With("redis", cfg.Redis.URL).Error("redis: unreachable", slog.Group("pool", "key", "sk-ant-pool-two-222"))
	logger.WithGroup("g").Error("master " + cfg.Auth.MasterKey)
	for _, s := range allSecrets {
		if strings.Contains(buf.String(), s) {
			t.Errorf("the log shows %q:\n%s", s, &buf)
		}
	}
	if !strings.Contains(buf.String(), "postgres://tollgate:****@db.internal") || !strings.Contains(buf.String(), `"key":"****"`) {
		t.Errorf("log:\n%s", &buf)
	}
	// Scrubbed errors keep their identity.
	sentinel := errors.New("sk-upstream-5e6f7a8b refused")
	if err := scrubError(secretReplacer(cfg), fmt.Errorf("x: %w", sentinel)); !errors.Is(err, sentinel) || strings.Contains(err.Error(), "5e6f7a8b") {
		t.Errorf("scrubError: %v", err)
	}
	// Nothing secret, nothing wrapped.
	if r := secretReplacer(config.Default()); r != nil {
		t.Errorf("the default configuration has no secrets, got a replacer")
	}
}

func TestNewServerLimits(t *testing.T) {
	cfg := testConfig(t, "server: { read_header_timeout: 3s, read_timeout: 45s, idle_timeout: 90s, max_header_bytes: 32768 }\n"+
		"providers: [ { name: d, type: echo } ]\nmodels: [ { name: e, targets: [ { provider: d } ] } ]\n")
	s := newServer(cfg, nil, slog.New(slog.DiscardHandler))
	if s.ReadHeaderTimeout != 3*time.Second || s.ReadTimeout != 45*time.Second || s.IdleTimeout != 90*time.Second ||
		s.MaxHeaderBytes != 32768 || s.WriteTimeout != 0 {
		t.Errorf("server: %+v", s)
	}
	d := newServer(config.Default(), nil, slog.New(slog.DiscardHandler))
	if d.ReadHeaderTimeout != 10*time.Second || d.ReadTimeout != time.Minute || d.IdleTimeout != 2*time.Minute || d.MaxHeaderBytes != 64<<10 {
		t.Errorf("defaults: %+v", d)
	}
}
