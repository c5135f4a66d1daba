package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// endpointsEnv is a gateway in front of a fake OpenAI serving its other
// endpoints, with a ledger: oai serves them by its type, ranker declares
// /v1/rerank; a model on Anthropic serves none of them.
func endpointsEnv(t *testing.T) (*env, *upstreamtest.Server, *store.Store) {
	t.Helper()
	up := upstreamtest.New(upstreamtest.OpenAIEndpoints)
	t.Cleanup(up.Close)
	e, db := ledgerEnv(t, `
providers:
  - { name: oai, type: openai, base_url: "`+up.URL+`/v1", api_key: k }
  - { name: ranker, type: openai, base_url: "`+up.URL+`/v1", api_key: k, endpoints: [ /v1/rerank ] }
  - { name: ant, type: anthropic, base_url: "`+up.URL+`", api_key: k }
models:
  - { name: instruct, targets: [ { provider: oai, model: gpt-3.5-turbo-instruct } ], pricing: { input: "1.50", output: "2" } }
  - { name: moderation, targets: [ { provider: oai, model: omni-moderation-latest } ], pricing: { input: "0", output: "0" } }
  - { name: dalle, targets: [ { provider: oai, model: dall-e-3 } ], pricing: { per_image: "0.04" }, limits: { budget_usd: "1" } }   # priced by the image alone, under a budget
  - { name: gpt-image, targets: [ { provider: oai, model: gpt-image-1 } ], pricing: { input: "5", output: "40" } }
  - { name: tts, targets: [ { provider: oai, model: tts-1 } ], pricing: { per_character: "0.000015" } }
  - { name: rerank, targets: [ { provider: ranker, model: rerank-v3.5 } ], pricing: { per_query: "0.002" } }
  - { name: jina-rerank, targets: [ { provider: ranker, model: jina-reranker-v2 } ], pricing: { input: "0.02", output: "0" } }
  - { name: rerank-oai, targets: [ { provider: oai, model: rerank-v3.5 } ] }
  - { name: claude, targets: [ { provider: ant, model: claude-x } ] }
`)
	return e, up, db
}

// Each of OpenAI's other endpoints passes through with only its model
// rewritten, its answer relayed as it came (audio unread), and a ledger
// record with its endpoint, its tokens or units, and their cost.
func TestOpenAIEndpointsPassThrough(t *testing.T) {
	e, up, db := endpointsEnv(t)
	for _, c := range []struct {
		path, body, upstreamModel string
		input, output, units      int64
		unit                      string
		cost                      int64
	}{
		{"/v1/completions", `{"model":"instruct","prompt":"Say hello","max_tokens":7}`, "gpt-3.5-turbo-instruct", 5, 7, 0, "", 5*1500 + 7*2000},
		{"/v1/moderations", `{"model":"moderation","input":"some text"}`, "omni-moderation-latest", 0, 0, 0, "", 0},
		{"/v1/images/generations", `{"model":"dalle","prompt":"a cat","n":2,"size":"1024x1024"}`, "dall-e-3", 0, 0, 2, "image", 80_000_000},
		{"/v1/images/generations", `{"model":"gpt-image","prompt":"a cat"}`, "gpt-image-1", 50, 4160, 1, "image", 50*5000 + 4160*40000},
		// Streamed: no stream_options added (the images API refuses it),
		// usage from the stream's last event.
		{"/v1/images/generations", `{"model":"gpt-image","prompt":"a cat","stream":true,"partial_images":1}`, "gpt-image-1", 50, 4160, 0, "", 50*5000 + 4160*40000},
		{"/v1/audio/speech", `{"model":"tts","input":"Héllo there","voice":"alloy"}`, "tts-1", 0, 0, 11, "character", 11 * 15000},
		{"/v1/rerank", `{"model":"rerank","query":"q","documents":["a","b","c"]}`, "rerank-v3.5", 0, 0, 1, "query", 2_000_000},
		{"/v1/rerank", `{"model":"jina-rerank","query":"q","documents":["a","b"]}`, "jina-reranker-v2", 42, 0, 0, "", 42 * 20},
	} {
		name := c.path + " " + c.upstreamModel
		resp := e.do("POST", c.path, c.body, openAIAuth...)
		got := readAll(t, resp.Body)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", name, resp.StatusCode, got)
			continue
		}
		sent := up.Last()
		if sent.Path != c.path || gjson.GetBytes(sent.Body, "model").Str != c.upstreamModel {
			t.Errorf("%s: upstream got %s %s", name, sent.Path, sent.Body)
		}
		if c.path == "/v1/audio/speech" && (!bytes.Equal(got, upstreamtest.SpeechAudio) || resp.Header.Get("Content-Type") != "audio/mpeg") {
			t.Errorf("%s: audio not relayed as it came: %q", name, got)
		}
		r := waitRecord(t, db, resp.Header.Get("Tollgate-Request-Id"))
		if r.Endpoint != c.path || r.Input != c.input || r.Output != c.output || r.Units != c.units || r.Unit != c.unit ||
			r.CostNanoUSD == nil || *r.CostNanoUSD != c.cost || r.Lane != "passthrough" {
			cost := int64(-1)
			if r.CostNanoUSD != nil {
				cost = *r.CostNanoUSD
			}
			t.Errorf("%s: record endpoint %q tokens %d/%d units %d %q cost %d, want %d/%d %d %q %d",
				name, r.Endpoint, r.Input, r.Output, r.Units, r.Unit, cost, c.input, c.output, c.units, c.unit, c.cost)
		}
	}
	// Usage by endpoint: a group for each, with its requests and cost.
	now := clock.Now() // the ledger's clock, which CI moves
	groups, err := db.Usage(context.Background(), store.UsageFilter{Since: now.Add(-time.Hour), Until: now.Add(time.Hour), GroupBy: store.ByEndpoint})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range groups {
		got[g.Group] = fmt.Sprintf("%d %d", g.Requests, *g.CostNanoUSD)
	}
	want := map[string]string{"/v1/completions": "1 21500", "/v1/moderations": "1 0", "/v1/images/generations": "3 413300000",
		"/v1/audio/speech": "1 165000", "/v1/rerank": "2 2000840"}
	if !maps.Equal(got, want) {
		t.Errorf("usage by endpoint: %v, want %v", got, want)
	}
}

// A model whose target does not serve an endpoint is refused before any
// upstream is asked: an Anthropic target, and an OpenAI-compatible one
// that does not declare /v1/rerank. Paths no endpoint has stay 404.
func TestOpenAIEndpointsNotServed(t *testing.T) {
	e, up, _ := endpointsEnv(t)
	for _, c := range []struct{ path, body string }{
		{"/v1/completions", `{"model":"claude","prompt":"x"}`},
		{"/v1/images/generations", `{"model":"claude","prompt":"x"}`},
		{"/v1/rerank", `{"model":"rerank-oai","query":"q","documents":["a"]}`},
	} {
		resp := e.do("POST", c.path, c.body, openAIAuth...)
		got := readAll(t, resp.Body)
		if resp.StatusCode != 400 || gjson.GetBytes(got, "error.code").Str != "endpoint_not_served" || gjson.GetBytes(got, "error.param").Str != "model" {
			t.Errorf("%s %s: %d %s", c.path, c.body, resp.StatusCode, got)
		}
	}
	resp := e.do("POST", "/v1/files", `{"model":"instruct"}`, openAIAuth...)
	if got := readAll(t, resp.Body); resp.StatusCode != 404 {
		t.Errorf("/v1/files: %d %s", resp.StatusCode, got)
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("%d refused requests reached the upstream", n)
	}
}

// endpoints is refused on a provider type that takes none, and an
// endpoint the type cannot serve is named.
func TestProviderEndpointsChecked(t *testing.T) {
	for yaml, want := range map[string]string{
		`{ name: a, type: anthropic, api_key: k, endpoints: [ /v1/rerank ] }`: "is not an option of type anthropic",
		`{ name: o, type: openai, api_key: k, endpoints: [ /v1/files ] }`:     `"/v1/files" is not an endpoint type openai may serve`,
	} {
		_, err := config.Parse([]byte("providers: [ "+yaml+" ]\nmodels: [ { name: m, targets: [ { provider: "+yaml[7:8]+", model: x } ] } ]\n"),
			func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yaml, err, want)
		}
	}
}
