package gateway

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
)

// pipeProvider answers with a stream whose events the test writes.
type pipeProvider struct {
	only *dialect.Dialect
	out  chan *io.PipeWriter
}

func (p *pipeProvider) Name() string                   { return "pipe" }
func (p *pipeProvider) Dialect() *dialect.Dialect      { return p.only }
func (p *pipeProvider) Speaks(d *dialect.Dialect) bool { return d == p.only }
func (p *pipeProvider) Do(_ context.Context, r *provider.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body.Reader())
	pr, pw := io.Pipe()
	p.out <- pw
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr, ContentLength: -1}, nil
}

// A held stream gives its request body back (and its share of the buffer
// budget) as soon as its first events report the prompt's usage, as an
// Anthropic message_start does; one whose usage comes only at the end (an
// OpenAI chat stream) keeps it for the estimate. Both relay every byte.
func TestStreamReleasesRequestBodyOnStart(t *testing.T) {
	anthropicEvents := []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"u\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
	openAIEvents := []string{
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"u\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n",
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"u\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"u\",\"choices\":[],\"usage\":{\"prompt_tokens\":25,\"completion_tokens\":2,\"total_tokens\":27}}\n\n",
		"data: [DONE]\n\n",
	}
	// A tool call, so that a translated stream whose plan aliased the
	// client's body (the tools' names) would show the poisoned buffer.
	anthropicTool := []string{
		anthropicEvents[0],
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Oslo\\\"}\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
	long := strings.Repeat("x", 20000)
	chatTools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	respTools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	for _, tc := range []struct {
		name     string
		d        *dialect.Dialect // the upstream's
		path     string
		body     string
		events   []string
		released bool
		// want is what a translated stream must carry; a pass-through
		// one must be the upstream's events, byte for byte.
		want []string
	}{
		{"anthropic", dialect.Messages, "/v1/messages", `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`, anthropicEvents, true, nil},
		{"openai", dialect.Chat, "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"` + long + `"}]}`, openAIEvents, false, nil},
		{"chat to anthropic", dialect.Messages, "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},` + chatTools + `,"messages":[{"role":"user","content":"` + long + `"}]}`, anthropicTool, true,
			[]string{`"name":"get_weather"`, `"arguments":"{\"city\": \"Oslo\"}"`, `"finish_reason":"tool_calls"`, `"prompt_tokens":25`, "data: [DONE]\n\n"}},
		{"responses to anthropic", dialect.Messages, "/v1/responses", `{"model":"m","stream":true,"store":false,` + respTools + `,"input":"` + long + `"}`, anthropicTool, true,
			[]string{`"type":"function_call"`, `"name":"get_weather"`, `"arguments":"{\"city\": \"Oslo\"}"`, "event: response.completed", `"input_tokens":25`}},
		{"anthropic to openai", dialect.Chat, "/v1/messages", `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`, openAIEvents, false,
			[]string{`"text":"hi"`, `"input_tokens":25`, "event: message_stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pipeProvider{only: tc.d, out: make(chan *io.PipeWriter, 1)}
			cfg := &config.Config{Models: []config.Model{{Name: "m", Targets: []config.Target{{Provider: "pipe", Model: "u"}}}}}
			routes, err := route.New(cfg, map[string]provider.Provider{"pipe": p}, nil)
			if err != nil {
				t.Fatal(err)
			}
			g := New(Options{Routes: routes, Auth: auth.New("sk-test", nil), MaxBodyBytes: 1 << 20})
			srv := httptest.NewServer(g.Handler())
			defer srv.Close()

			req, _ := http.NewRequest("POST", srv.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer sk-test")
			req.Header.Set("anthropic-version", "2023-06-01")
			done := make(chan *http.Response, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
				}
				done <- resp
			}()
			pw := <-p.out
			if held := g.buffered.used.Load(); held < int64(len(tc.body)) {
				t.Fatalf("%d bytes held while the request is sent, want its %d", held, len(tc.body))
			}
			io.WriteString(pw, tc.events[0])
			resp := <-done
			if resp == nil {
				t.FailNow()
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			var got strings.Builder
			readEvent := func() {
				for {
					line, err := br.ReadString('\n')
					got.WriteString(line)
					if line == "\n" || err != nil {
						return
					}
				}
			}
			readEvent() // the first event reached the client: the body is decided
			held := g.buffered.used.Load()
			if tc.released && held != 0 {
				t.Errorf("%d bytes of the request still held after the upstream reported its usage", held)
			}
			if !tc.released && held < int64(len(tc.body)) {
				t.Errorf("%d bytes held, want the body kept until the stream's usage", held)
			}
			for _, ev := range tc.events[1:] {
				io.WriteString(pw, ev)
			}
			pw.Close()
			rest, _ := io.ReadAll(br)
			got.Write(rest)
			if tc.want == nil {
				if want := strings.Join(tc.events, ""); got.String() != want {
					t.Errorf("stream not relayed as sent:\n got %q\nwant %q", got.String(), want)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(got.String(), w) {
					t.Errorf("translated stream lacks %s:\n%s", w, got.String())
				}
			}
		})
	}
}
