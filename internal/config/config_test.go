package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/caps"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestInterpolate(t *testing.T) {
	vars := env(map[string]string{"A": "alpha", "EMPTY": "", "D": "$x"})
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "alpha"},
		{in: "x-${A}-${A}", want: "x-alpha-alpha"},
		{in: "${MISSING:-fallback}", want: "fallback"},
		{in: "${EMPTY:-fallback}", want: "fallback"},
		{in: "${EMPTY}", want: ""},
		{in: "${A:-unused}", want: "alpha"},
		{in: "${MISSING:-}", want: ""},
		{in: "$${A}", want: "${A}"},
		{in: "pa$$word$", want: "pa$$word$"},
		{in: "${D}", want: "$x"}, // values are not expanded again
		{in: "${MISSING}", wantErr: "environment variable MISSING is not set"},
		{in: "${A", wantErr: "unterminated"},
		{in: "${1A}", wantErr: "invalid variable name"},
		{in: "${}", wantErr: "invalid variable name"},
	}
	for _, tc := range tests {
		got, err := Interpolate(tc.in, vars)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Interpolate(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("Interpolate(%q) error = %v", tc.in, err)
		case got != tc.want:
			t.Errorf("Interpolate(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"${A}", "$${A}", "${A:-d}", "a$b", "${", "${A}${B:-x}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Interpolate(s, env(map[string]string{"A": "v"}))
		if err == nil && !strings.Contains(s, "$") && out != s {
			t.Fatalf("Interpolate(%q) = %q changed text without $", s, out)
		}
	})
}

// testMaster is a master key of the shortest accepted length.
const testMaster = "0123456789abcdef0123456789abcdef"

const full = `
server:   { addr: 127.0.0.1:9090, max_body_bytes: 1024, drain_timeout: 5s }
auth:     { master_key: "${MASTER}" }
providers:
  - { name: oai, type: openai, base_url: "https://api.openai.com/v1", api_key: "${OPENAI_API_KEY}" }
  - name: ant
    type: anthropic
    api_key: "${ANTHROPIC_API_KEY:-none}"
    timeouts: { connect: 2s, first_byte: 30s, idle: 10s, total: 1h }
  - { name: demo, type: echo }
  # - { name: off, type: openai, api_key: "${NOT_SET_BUT_COMMENTED}" }
models:
  - name: claude-sonnet-4-5
    aliases: [anthropic/claude-sonnet-4.5]
    targets: [ { provider: ant, model: claude-sonnet-4-5-20250929 } ]
  - { name: gpt, targets: [ { provider: oai, model: gpt-4o } ] }
  - { name: echo, targets: [ { provider: demo } ] }
`

func TestParseFull(t *testing.T) {
	c, err := Parse([]byte(full), env(map[string]string{"MASTER": testMaster, "OPENAI_API_KEY": "sk-o"}))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.Server.Addr != "127.0.0.1:9090" || c.Server.MaxBodyBytes != 1024 || c.Server.DrainTimeout != 5*time.Second {
		t.Errorf("server = %+v", c.Server)
	}
	if c.Auth.MasterKey != testMaster {
		t.Errorf("master key = %q", c.Auth.MasterKey)
	}
	ant := c.ProviderByName("ant")
	if ant.APIKey != "none" || ant.BaseURL != "https://api.anthropic.com" {
		t.Errorf("ant = %+v (default base_url and ${VAR:-default})", ant)
	}
	if want := (Timeouts{Connect: 2 * time.Second, FirstByte: 30 * time.Second, Idle: 10 * time.Second, Total: time.Hour}); ant.Timeouts != want {
		t.Errorf("ant timeouts = %+v, want %+v", ant.Timeouts, want)
	}
	oai := c.ProviderByName("oai")
	if oai.APIKey != "sk-o" || oai.Timeouts.Idle != DefaultIdleTimeout || oai.Timeouts.Total != 0 {
		t.Errorf("oai = %+v (defaults: no total timeout)", oai)
	}
	if len(c.Models) != 3 || c.Models[0].Aliases[0] != "anthropic/claude-sonnet-4.5" || c.Models[2].Targets[0].Model != "" {
		t.Errorf("models = %+v", c.Models)
	}
}

// Capabilities are read straight into the type the translators use.
func TestCapabilities(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(minimal, "targets:", `capabilities: { thinking: adaptive, reasoning: deepseek, max_tokens_field: max_tokens,
      base64_images_only: true, top_k: true, max_stop: 2, system_messages: true }, targets:`, 1)), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := caps.Caps{Thinking: caps.ThinkingAdaptive, Reasoning: caps.ReasoningDeepSeek, LegacyMaxTokens: true,
		NoURLImages: true, AcceptsTopK: true, MaxStop: 2, SystemMessages: true}
	if got := c.Models[0].Capabilities; got != want {
		t.Errorf("capabilities = %+v, want %+v", got, want)
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	vars := env(map[string]string{"MASTER": testMaster, "OPENAI_API_KEY": "sk"})
	tests := []struct {
		name, yaml, want string
	}{
		{"missing env var", full, ""}, // placeholder replaced below
		{"unknown top-level key", "servr: {}\n" + minimal, "servr: unknown field"},
		{"unknown nested key", strings.Replace(minimal, "type: echo", "type: echo, timeouts: { conect: 1s }", 1), "providers[0].timeouts.conect: unknown field"},
		{"unknown model key", strings.Replace(minimal, "targets:", "target: x, targets:", 1), "models[0].target: unknown field"},
		{"duplicate model name", minimal + "  - { name: echo, targets: [ { provider: demo } ] }\n", "models[1].name: \"echo\" is already declared at models[0].name"},
		{"alias clashes with a name", strings.Replace(minimal, "name: echo,", "name: echo, aliases: [a, echo],", 1), "models[0].aliases[1]: \"echo\" is already declared"},
		{"unknown provider in target", strings.Replace(minimal, "provider: demo", "provider: nope", 1), "models[0].targets[0].provider: unknown provider \"nope\""},
		{"unknown provider type", strings.Replace(minimal, "type: echo", "type: cohere", 1), "providers[0].type: unknown provider type \"cohere\""},
		{"missing upstream model", "providers: [ { name: o, type: openai, base_url: \"http://x/v1\" } ]\nmodels: [ { name: m, targets: [ { provider: o } ] } ]\n", "models[0].targets[0].model: is required"},
		{"bad base_url", "providers: [ { name: o, type: openai, base_url: \"ftp://x\" } ]\nmodels: [ { name: m, targets: [ { provider: o, model: x } ] } ]\n", "providers[0].base_url"},
		{"bad duration", strings.Replace(minimal, "type: echo", "type: echo, timeouts: { idle: soon }", 1), `providers[0].timeouts.idle: expected a duration with a unit, such as 30s, 5m or 1h, found "soon"`},
		{"duration without a unit", "server: { drain_timeout: 30 }\n" + minimal, `server.drain_timeout: expected a duration with a unit, such as 30s, 5m or 1h, found "30"`},
		{"not a number", "server: { max_body_bytes: lots }\n" + minimal, `server.max_body_bytes: expected a whole number, found "lots"`},
		{"not a bool", "server: { target_header: maybe }\n" + minimal, `server.target_header: expected true or false, found "maybe"`},
		{"negative timeout", strings.Replace(minimal, "type: echo", "type: echo, timeouts: { idle: -1s }", 1), "providers[0].timeouts.idle: must not be negative"},
		{"bad http_client", strings.Replace(minimal, "type: echo", "type: echo, http_client: fasthttp", 1), "providers[0].http_client: \"fasthttp\" is not one of lean, net/http"},
		{"no targets", "providers: [ { name: demo, type: echo } ]\nmodels: [ { name: m, targets: [] } ]\n", "models[0].targets: at least one target"},
		{"no models", "providers: [ { name: demo, type: echo } ]\n", "models: at least one model"},
		{"targets not a list", strings.Replace(minimal, "targets: [ { provider: demo } ]", "targets: demo", 1), "models[0].targets: expected a list"},
		{"bad addr", "server: { addr: nowhere }\n" + minimal, "server.addr"},
		{"negative rpm", "limits: { key_defaults: { rpm: -5 } }\n" + minimal, "limits.key_defaults: rpm: must be a positive integer"},
		{"bad budget", "limits: { key_defaults: { budget_usd: 1e3 } }\n" + minimal, "limits.key_defaults: budget_usd"},
		{"bad period", strings.Replace(minimal, "targets:", "limits: { budget_usd: 5, budget_period: weekly }, targets:", 1), "models[0].limits: budget_period"},
		{"unknown limit", strings.Replace(minimal, "targets:", "limits: { rpd: 5 }, targets:", 1), "models[0].limits.rpd: unknown field"},
		{"bad redis url", "redis: { url: \"127.0.0.1:6379\" }\n" + minimal, "redis.url"},
		{"bad fail mode", "redis: { url: \"redis://x:1\", on_error: ignore }\n" + minimal, "redis.on_error"},
		{"negative redis timeout", "redis: { url: \"redis://x:1\", timeout: -1s }\n" + minimal, "redis.timeout"},
		{"bad thinking mode", strings.Replace(minimal, "targets:", "capabilities: { thinking: deep }, targets:", 1), "models[0].capabilities.thinking: \"deep\" is not one of budget, adaptive, none (line 4)"},
		{"bad max_tokens_field", strings.Replace(minimal, "targets:", "capabilities: { max_tokens_field: tokens }, targets:", 1), "models[0].capabilities.max_tokens_field: \"tokens\" is not one of max_completion_tokens, max_tokens"},
		{"negative max_stop", strings.Replace(minimal, "targets:", "capabilities: { max_stop: -1 }, targets:", 1), "models[0].capabilities: token counts and max_stop must not be negative"},
		{"negative ledger retention", "database: { ledger_retention: -1h }\n" + minimal, "database.ledger_retention: -1h0m0s: want 0 (keep every record) or at least 24h"},
		{"short ledger retention", "database: { ledger_retention: 90m }\n" + minimal, "database.ledger_retention: 1h30m0s: want 0 (keep every record) or at least 24h"},
		{"ledger retention without a unit", "database: { ledger_retention: 90 }\n" + minimal, `database.ledger_retention: expected a duration with a unit`},
		{"bad access log", "logging: { access: sample(0) }\n" + minimal, `logging.access: must be on, off, errors or sample(N) with N a whole number from 1, not "sample(0)"`},
		{"access log as a bool", "logging: { access: true }\n" + minimal, `logging.access: must be on, off, errors or sample(N)`},
		{"empty file", "", "empty configuration"},
		{"not YAML", "models: [", "parsing YAML"},
	}
	tests[0].yaml = strings.Replace(full, "${OPENAI_API_KEY}", "${NOT_SET}", 1)
	tests[0].want = "providers[0].api_key: environment variable NOT_SET is not set"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), vars)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

const minimal = `providers:
  - { name: demo, type: echo }
models:
  - { name: echo, targets: [ { provider: demo } ] }
`

// TestAccessLogSettings: on and off stay words (YAML 1.1 would have made
// them booleans), and every form the reference gives is accepted.
func TestAccessLogSettings(t *testing.T) {
	for _, v := range []string{"on", "off", "errors", "sample(100)", "\"sample(3)\""} {
		c, err := Parse([]byte("logging: { access: "+v+" }\n"+minimal), env(nil))
		if err != nil {
			t.Errorf("access: %s: %v", v, err)
			continue
		}
		if want := strings.Trim(v, `"`); c.Logging.Access != want {
			t.Errorf("access: %s read as %q", v, c.Logging.Access)
		}
	}
}

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default() is invalid: %v", err)
	}
	if c.Server.Addr != "127.0.0.1:8080" || c.Models[0].Name != "echo" || c.Providers[0].Type != TypeEcho {
		t.Errorf("Default() = %+v", c)
	}
}

func TestInterpolatedNumberKeepsItsType(t *testing.T) {
	c, err := Parse([]byte("server:\n  max_body_bytes: ${MAX}\n"+minimal), env(map[string]string{"MAX": "2048"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.MaxBodyBytes != 2048 {
		t.Errorf("max_body_bytes = %d, want 2048", c.Server.MaxBodyBytes)
	}
}

func TestPricing(t *testing.T) {
	c, err := Parse([]byte(`providers: [ { name: demo, type: echo } ]
models:
  - name: m
    targets: [ { provider: demo } ]
    pricing: { input: 0.1, output: "0.40", cache_read: 0.025, long_prompt: { threshold_tokens: 200000, input: 0.2 } }
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Models[0].Pricing
	if p.Input != "0.1" || p.Output != "0.40" || p.CacheRead != "0.025" || p.LongPrompt.Input != "0.2" || p.LongPrompt.ThresholdTokens != 200000 {
		t.Errorf("pricing = %+v %+v", p, p.LongPrompt)
	}
	for _, bad := range []struct{ yaml, want string }{
		{`pricing: { input: -1 }`, "models[0].pricing.input"},
		{`pricing: { output: 1e-3 }`, "models[0].pricing.output"},
		{`pricing: { input: 0.0000000001 }`, "models[0].pricing.input"},
		{`pricing: { input: [1] }`, "models[0].pricing.input: expected a string"},
		{`pricing: { long_prompt: { input: 1 } }`, "models[0].pricing.long_prompt.threshold_tokens"},
		{`pricing: { inputs: 1 }`, "models[0].pricing.inputs: unknown field"},
	} {
		_, err := Parse([]byte("providers: [ { name: demo, type: echo } ]\nmodels:\n  - name: m\n    targets: [ { provider: demo } ]\n    "+bad.yaml+"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error = %v, want %q", bad.yaml, err, bad.want)
		}
	}
}

// database.ledger_retention keeps the ledger's records forever unless set.
func TestLedgerRetention(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want time.Duration
	}{
		{minimal, 0},
		{"database: { ledger_retention: 0s }\n" + minimal, 0},
		{"database: { ledger_retention: 24h }\n" + minimal, 24 * time.Hour},
		{"database: { ledger_retention: 2160h }\n" + minimal, 90 * 24 * time.Hour},
	} {
		c, err := Parse([]byte(tc.yaml), env(nil))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if c.Database.LedgerRetention != tc.want {
			t.Errorf("%q: ledger_retention %s, want %s", tc.yaml, c.Database.LedgerRetention, tc.want)
		}
	}
}

// LoadDatabase needs only the database's and redis's variables: the
// others, the master key's too, are left unset and unchecked.
func TestLoadDatabaseLeavesOtherVariablesUnset(t *testing.T) {
	for _, v := range []string{"TG_T_MASTER", "TG_T_KEY", "TG_T_URL", "TG_T_IDLE", "TG_T_DB"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	path := filepath.Join(t.TempDir(), "tollgate.yaml")
	if err := os.WriteFile(path, []byte(`
auth: { master_key: "${TG_T_MASTER}" }
database: { url: "${TG_T_DB}" }
providers:
  - { name: oa, type: openai, api_key: "${TG_T_KEY}", base_url: "${TG_T_URL}", timeouts: { idle: "${TG_T_IDLE}" } }
models: [ { name: gpt-4o, targets: [ { provider: oa, model: gpt-4o } ] } ]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDatabase(path); err == nil || !strings.Contains(err.Error(), "database.url: environment variable TG_T_DB is not set") {
		t.Errorf("an unset database variable: %v", err)
	}
	t.Setenv("TG_T_DB", "sqlite://gw.db")
	c, err := LoadDatabase(path)
	if err != nil {
		t.Fatalf("LoadDatabase: %v", err)
	}
	if p := c.Providers[0]; c.Auth.MasterKey != "" || p.APIKey != "" || p.BaseURL != "https://api.openai.com/v1" || p.Timeouts.Idle != DefaultIdleTimeout {
		t.Errorf("unset values are not left unset (defaults applied): master key %q, provider %+v", c.Auth.MasterKey, p)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "TG_T_MASTER") {
		t.Errorf("Load with the master key's variable unset: %v", err)
	}
}

// A target of a model whose name is a pattern may leave its model out:
// the name the client asked for is sent.
func TestPatternTargetsMayOmitTheModel(t *testing.T) {
	const yaml = "providers: [ { name: ant, type: anthropic, api_key: k } ]\nmodels: [ { name: %q, targets: [ { provider: ant } ] } ]\n"
	if _, err := Parse(fmt.Appendf(nil, yaml, "claude-*"), env(nil)); err != nil {
		t.Errorf("a pattern: %v", err)
	}
	if _, err := Parse(fmt.Appendf(nil, yaml, "claude"), env(nil)); err == nil || !strings.Contains(err.Error(), "models[0].targets[0].model: is required") {
		t.Errorf("an exact name: %v", err)
	}
	if !IsPattern("gpt-*") || IsPattern("gpt-5") {
		t.Error("IsPattern")
	}
}

// Unset variables, unknown keys, duplicate keys, values of the wrong type
// and semantic errors are all reported at once, each once.
func TestParseReportsEveryError(t *testing.T) {
	_, err := Parse([]byte(`
server: { addr: "${NO_ADDR}", max_body_bytes: lots, drain_timeout: 30 }
auth: { master_key: "${NO_MASTER}", max_failures: 3, max_failures: 4 }
providers:
  - { name: oa, type: openai, api_key: "${NO_KEY}", timeouts: { conect: 1s } }
  - { name: oa, type: openai, api_key: k, http_client: fast }
models:
  - { name: "${NO_MODEL}", targets: [ { provider: oa, model: m, weight: heavy } ] }
  - { name: m2, targets: demo }
`), env(nil))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		"server.addr: environment variable NO_ADDR is not set (line 2)",
		"auth.master_key: environment variable NO_MASTER is not set",
		"providers[0].api_key: environment variable NO_KEY is not set",
		"models[0].name: environment variable NO_MODEL is not set",
		`server.max_body_bytes: expected a whole number, found "lots" (line 2)`,
		`server.drain_timeout: expected a duration with a unit`,
		"auth.max_failures: duplicate key (line 3)",
		"providers[0].timeouts.conect: unknown field",
		`models[0].targets[0].weight: expected a whole number, found "heavy"`,
		"models[1].targets: expected a list, found \"demo\"",
		`providers[1].name: duplicate provider name "oa"`,
		`providers[1].http_client: "fast" is not one of lean, net/http`,
	}
	msg := err.Error()
	for _, w := range want {
		if strings.Count(msg, w) != 1 {
			t.Errorf("want once: %s", w)
		}
	}
	// Nothing else: what is reported is not reported again as empty or
	// missing (models[0].name, models[1].targets).
	if n := strings.Count(msg, "\n") + 1; n != len(want) {
		t.Errorf("%d errors, want %d:\n%s", n, len(want), msg)
	}
}
