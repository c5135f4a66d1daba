package gateway_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// Each request's line carries its exact cost, or null when the model has
// no price: never 0.
func TestCostInRequestLine(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	defer up.Close()
	cfg, err := config.Parse([]byte(`
providers:
  - { name: oai, type: openai, base_url: "`+up.URL+`/v1", api_key: k }
  - { name: demo, type: echo }
models:
  - name: priced
    targets: [ { provider: oai, model: some-model } ]
    pricing: { input: "2.50", output: "10", cache_read: "1.25" }
  - name: unpriced
    targets: [ { provider: oai, model: some-model } ]
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h, closeIdle := built.Handler, built.Close
	defer closeIdle()
	gw := httptest.NewServer(h)
	defer gw.Close()
	e := &env{t: t, gw: gw, logs: logs}
	for _, tc := range []struct {
		model string
		want  string
	}{
		// openai_completion.json: prompt 1919 (1792 cached), completion 10:
		// 127 × 2.50 + 1792 × 1.25 + 10 × 10 = 317.5 + 2240 + 100 µ-USD = 2,657,500 nano-USD.
		{"priced", "2657500"},
		{"unpriced", "null"},
	} {
		resp := e.do("POST", "/v1/chat/completions", `{"model":"`+tc.model+`","messages":[{"role":"user","content":"x"}]}`, openAIAuth...)
		readAll(t, resp.Body)
		resp.Body.Close()
		line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
		if got := line.Get("cost_nano_usd"); got.Raw != tc.want || (tc.want == "null" && got.Type != gjson.Null) {
			t.Errorf("%s: cost_nano_usd = %s, want %s", tc.model, got.Raw, tc.want)
		}
	}
}
