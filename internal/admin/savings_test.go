package admin_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/store/storetest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// TestCacheSavingsShown: what prompt caching saved each request, from the
// upstream's usage and the model's prices, is in /admin/requests and
// summed in /admin/usage: positive for cache reads, negative for cache
// writes alone (priced above input), unknown (null, and counted) on a
// model without prices.
func TestCacheSavingsShown(t *testing.T) {
	up := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		usage := `{"input_tokens":10,"cache_read_input_tokens":1000,"output_tokens":5}`
		if strings.Contains(string(r.Body), "write") {
			usage = `{"input_tokens":10,"cache_creation_input_tokens":1000,"output_tokens":5}`
		}
		return upstreamtest.Reply{Body: []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"ok"}],` +
			`"stop_reason":"end_turn","stop_sequence":null,"usage":` + usage + `}`)}
	})
	defer up.Close()
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnvWith(t, db, `
providers: [ { name: ant, type: anthropic, base_url: "`+up.URL+`", api_key: x } ]
models:
  - { name: m, targets: [ { provider: ant, model: x } ],
      pricing: { input: "3", output: "15", cache_read: "0.30", cache_write_5m: "3.75", cache_write_1h: "6" } }
  - { name: free-for-all, targets: [ { provider: ant, model: made-up-unpriced-model } ] }
`)
			keys := map[string]admin.KeyView{}
			for _, c := range []struct{ key, model, prompt string }{
				{"reader", "m", "read"}, {"writer", "m", "write"}, {"unpriced", "free-for-all", "read"},
			} {
				keys[c.key] = e.key(`{"name":"` + c.key + `"}`)
				body := fmt.Sprintf(`{"model":%q,"max_tokens":16,"messages":[{"role":"user","content":%q}]}`, c.model, c.prompt)
				if status, _, b := e.send("/v1/messages", keys[c.key].Key, body); status != 200 {
					t.Fatalf("%s: %d %v", c.key, status, b)
				}
			}
			// 1000 tokens read at $0.30/M instead of $3/M saved 1000 × 2.70 µ-USD;
			// 1000 written at $3.75/M cost 1000 × 0.75 µ-USD more than input.
			want := map[string]any{keys["reader"].ID: 2_700_000.0, keys["writer"].ID: -750_000.0, keys["unpriced"].ID: nil}

			var page admin.RequestPage
			status, raw := e.call("GET", "/admin/requests", master, "", &page)
			if status != 200 || len(page.Data) != 3 {
				t.Fatalf("requests: %d %v", status, raw)
			}
			for _, r := range raw["data"].([]any) {
				rec := r.(map[string]any)
				v, present := rec["cache_savings_nano_usd"]
				if w := want[rec["key_id"].(string)]; !present || v != w {
					t.Errorf("record of %v: cache_savings_nano_usd %v (present %v), want %v", rec["key_id"], v, present, w)
				}
			}

			var usage admin.UsageReport
			status, raw = e.call("GET", "/admin/usage?group_by=key&since=1h", master, "", &usage)
			if status != 200 || len(usage.Data) != 3 {
				t.Fatalf("usage: %d %v", status, raw)
			}
			for _, g := range raw["data"].([]any) {
				g := g.(map[string]any)
				v, present := g["cache_savings_nano_usd"]
				unknown := 0.0
				if g["group"] == keys["unpriced"].ID {
					unknown = 1
				}
				if w := want[g["group"].(string)]; !present || v != w || g["cache_savings_unknown_requests"] != unknown {
					t.Errorf("usage of %v: cache_savings_nano_usd %v (present %v), %v unknown; want %v, %v unknown",
						g["group"], v, present, g["cache_savings_unknown_requests"], w, unknown)
				}
			}
			total := raw["total"].(map[string]any)
			if total["cache_savings_nano_usd"] != 1_950_000.0 || total["cache_savings_unknown_requests"] != 1.0 {
				t.Errorf("usage total: %v", total)
			}

			// By model: the reader's and the writer's in one group.
			status, raw = e.call("GET", "/admin/usage?group_by=model&since=1h", master, "", &usage)
			if status != 200 || len(usage.Data) != 2 || usage.Data[1].Group != "m" || usage.Data[1].CacheSavingsNanoUSD == nil ||
				*usage.Data[1].CacheSavingsNanoUSD != 1_950_000 || usage.Data[0].CacheSavingsNanoUSD != nil ||
				usage.Data[0].CacheSavingsUnknownRequests != 1 {
				t.Errorf("usage by model: %d %v", status, raw)
			}
		})
	}
}
