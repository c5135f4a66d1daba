package gateway_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// A span per request reaches an OTLP/HTTP collector, with the GenAI
// attributes, under the client's trace.
func TestTracingExportsSpans(t *testing.T) {
	var mu sync.Mutex
	var spans []*tracepb.Span
	var service string
	collectorSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req collector.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			t.Errorf("collector got %s %d bytes", r.URL.Path, len(b))
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.Resource.GetAttributes() {
				if a.Key == "service.name" {
					service = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		mu.Unlock()
		w.Write(nil)
	}))
	defer collectorSrv.Close()
	up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	defer up.Close()
	cfg, err := config.Parse([]byte(`
tracing: { otlp_endpoint: "`+collectorSrv.URL+`" }
providers: [ { name: oai, type: openai, base_url: "`+up.URL+`/v1", api_key: k } ]
models: [ { name: gpt, targets: [ { provider: oai, model: gpt-up } ], pricing: { input: "1", output: "2", cache_read: "0.5" } } ]
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h, closeIdle := built.Handler, built.Close
	srv := httptest.NewServer(h)
	// An Anthropic client on an OpenAI upstream, inside the client's trace.
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(`{"model":"gpt","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Api-Key", masterKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	srv.Close()
	closeIdle() // flushes the spans

	mu.Lock()
	defer mu.Unlock()
	if len(spans) != 1 || service != "tollgate" {
		t.Fatalf("%d spans from %q", len(spans), service)
	}
	sp := spans[0]
	attrs := map[string]string{}
	for _, a := range sp.Attributes {
		v := a.Value.GetStringValue()
		if v == "" {
			v = strings.TrimSpace(strings.TrimPrefix(a.Value.String(), "int_value:"))
		}
		attrs[a.Key] = v
	}
	if sp.Name != "chat gpt" || sp.Kind != tracepb.Span_SPAN_KIND_SERVER ||
		strings.ToLower(strings.TrimSpace(string(hexID(sp.TraceId)))) != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("span %q kind %v trace %x", sp.Name, sp.Kind, sp.TraceId)
	}
	for k, want := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt", "gen_ai.provider.name": "openai",
		"gen_ai.response.model": "gpt-up", "tollgate.lane": "translated", "tollgate.provider": "oai",
	} {
		if attrs[k] != want {
			t.Errorf("%s = %q, want %q (all: %v)", k, attrs[k], want, attrs)
		}
	}
	if attrs["gen_ai.usage.output_tokens"] == "" || attrs["tollgate.request_id"] != resp.Header.Get("Tollgate-Request-Id") {
		t.Errorf("attributes: %v", attrs)
	}
}

func hexID(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}
