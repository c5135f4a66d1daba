package gateway

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/embeddings"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
)

// chatBody returns an OpenAI request of about size bytes.
func chatBody(size int, stream bool) []byte {
	head := `{"model":"bench","stream":` + strconv.FormatBool(stream) + `,"temperature":0.2,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"`
	tail := `"}],"max_tokens":256}`
	return []byte(head + strings.Repeat("lorem ipsum ", max(0, size-len(head)-len(tail))/12) + tail)
}

// responsesBody is a Responses request of about size bytes.
func responsesBody(size int, stream bool) []byte {
	head := `{"model":"bench","stream":` + strconv.FormatBool(stream) + `,"temperature":0.2,"instructions":"You are terse.","input":[{"role":"user","content":"`
	tail := `"}],"max_output_tokens":256,"store":false}`
	return []byte(head + strings.Repeat("lorem ipsum ", max(0, size-len(head)-len(tail))/12) + tail)
}

// geminiBody is a Gemini generate request of about size bytes (the model
// is in the URL).
func geminiBody(size int) []byte {
	head := `{"systemInstruction":{"parts":[{"text":"You are terse."}]},"contents":[{"role":"user","parts":[{"text":"`
	tail := `"}]}],"generationConfig":{"temperature":0.2,"maxOutputTokens":256}}`
	return []byte(head + strings.Repeat("lorem ipsum ", max(0, size-len(head)-len(tail))/12) + tail)
}

// geminiStream is a 50-event Gemini stream, each event with running usage.
func geminiStream() []byte {
	var b bytes.Buffer
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"word%d \"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 20,\"totalTokenCount\": 20},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r1\"}\r\n\r\n", i)
	}
	b.WriteString("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 20,\"candidatesTokenCount\": 50,\"totalTokenCount\": 70},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r1\"}\r\n\r\n")
	return b.Bytes()
}

// anthropicStream is a 50-delta Messages stream like a real answer.
func anthropicStream() []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":3000,\"output_tokens\":2}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word%d \"}}\n\n", i)
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":51}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}

// openAIStream is a 50-chunk Chat Completions stream with include_usage on.
func openAIStream() []byte {
	var b bytes.Buffer
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"},\"finish_reason\":null}],\"usage\":null}\n\n", i)
	}
	b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n")
	b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":50,\"total_tokens\":70}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkRequestRewrite is the request half of the pass-through lane:
// scan (validate, find model) and send the body with the model spliced in.
func BenchmarkRequestRewrite(b *testing.B) {
	quoted := []byte(`"gpt-4o-2024-08-06"`)
	for _, size := range []int{1 << 10, 100 << 10} {
		body := chatBody(size, false)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				s, err := dialect.Scan(body, &dialect.Chat.Fields)
				if err != nil {
					b.Fatal(err)
				}
				pb := provider.Body{body[:s.ModelStart], quoted, body[s.ModelEnd:]}
				r := pb.Reader()
				r.(io.WriterTo).WriteTo(io.Discard)
			}
		})
	}
}

// BenchmarkStreamTap is the response half: split a 50-event stream into
// events, tap usage, and write them out.
func BenchmarkStreamTap(b *testing.B) {
	for _, tc := range []struct {
		name   string
		stream []byte
		tap    func() dialect.Tap
	}{
		{"anthropic-50", anthropicStream(), func() dialect.Tap { return dialect.Messages.NewTap(false) }},
		{"openai-50", openAIStream(), func() dialect.Tap { return dialect.Chat.NewTap(false) }},
		{"openai-50-strip", openAIStream(), func() dialect.Tap { return dialect.Chat.NewTap(true) }},
		{"gemini-50", geminiStream(), func() dialect.Tap { return dialect.Gemini.NewTap(false) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.stream)))
			tap := tc.tap()
			for b.Loop() {
				n, err := writeEvents(io.Discard, tc.stream, tap, nil)
				if err != nil || n != len(tc.stream) {
					b.Fatalf("consumed %d of %d: %v", n, len(tc.stream), err)
				}
			}
			if tap.Usage().Output == 0 {
				b.Fatal("no usage tapped")
			}
		})
	}
}

// cannedProvider answers every request with the same bytes, in process, so
// the handler benchmark measures the gateway and not a network.
type cannedProvider struct {
	contentType string
	body        []byte
	only        *dialect.Dialect // when set, the only dialect it speaks
}

func (p *cannedProvider) Name() string { return "canned" }
func (p *cannedProvider) Dialect() *dialect.Dialect {
	if p.only == nil {
		return dialect.Chat
	}
	return p.only
}
func (p *cannedProvider) Speaks(d *dialect.Dialect) bool { return p.only == nil || d == p.only }
func (p *cannedProvider) Do(_ context.Context, r *provider.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body.Reader())
	return &http.Response{
		StatusCode:    200,
		Header:        http.Header{"Content-Type": {p.contentType}},
		Body:          io.NopCloser(bytes.NewReader(p.body)),
		ContentLength: int64(len(p.body)),
	}, nil
}

// cannedEmbedder is a cannedProvider whose upstream takes embeddings in
// wire's shape.
type cannedEmbedder struct {
	cannedProvider
	wire *embeddings.Wire
}

func (p *cannedEmbedder) EmbedWire(string) *embeddings.Wire { return p.wire }

// embedBody is an embeddings request of n texts of about 60 bytes.
func embedBody(n int) []byte {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf(`"text number %d: a sentence of some ordinary words to embed"`, i)
	}
	return []byte(`{"model":"bench","input":[` + strings.Join(texts, ",") + `],"encoding_format":"float"}`)
}

// vectorJSON is a vector of dims values as JSON.
func vectorJSON(dims int) string {
	v := make([]string, dims)
	for i := range v {
		v[i] = strconv.FormatFloat(float64(i%97)/97-0.5, 'g', -1, 32)
	}
	return "[" + strings.Join(v, ",") + "]"
}

func openAIVectors(n, dims int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":` + vectorJSON(dims) + `}`
	}
	return []byte(`{"object":"list","data":[` + strings.Join(items, ",") + `],"model":"text-embedding-3-small","usage":{"prompt_tokens":192,"total_tokens":192}}`)
}

func geminiVectors(n, dims int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"values":` + vectorJSON(dims) + `}`
	}
	return []byte(`{"embeddings":[` + strings.Join(items, ",") + `]}`)
}

func titanVector(dims int) []byte {
	return []byte(`{"embedding":` + vectorJSON(dims) + `,"inputTextTokenCount":12}`)
}

func benchGateway(b *testing.B, p provider.Provider) http.Handler {
	cfg := &config.Config{Models: []config.Model{{Name: "bench", Targets: []config.Target{{Provider: "canned", Model: "gpt-4o-2024-08-06"}}}}}
	routes, err := route.New(cfg, map[string]provider.Provider{"canned": p}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return New(Options{Routes: routes, Auth: auth.New("sk-bench", nil), MaxBodyBytes: 32 << 20}).Handler()
}

// nopWriter is a ResponseWriter that discards, so the benchmark measures
// the handler rather than a recorder's buffering.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}
func (w *nopWriter) Flush()                      {}

var geminiAnswer = []byte(`{"candidates":[{"content":{"parts":[{"text":"Hello there, how can I help?"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":8,"totalTokenCount":28},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`)

var anthropicMessage = []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"Hello there, how can I help?"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":8}}`)

// BenchmarkHandler is the whole pass-through request in process: auth,
// read, scan, splice, relay with tap, log (to a discarding logger).
func BenchmarkHandler(b *testing.B) {
	completion := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how can I help?"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}`)
	response := []byte(`{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello there, how can I help?","annotations":[]}]}],"usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":28}}`)
	for _, tc := range []struct {
		name string
		body []byte
		p    provider.Provider
		path string // default /v1/chat/completions
	}{
		{"small-1KB", chatBody(1<<10, false), &cannedProvider{"application/json", completion, nil}, ""},
		{"large-100KB", chatBody(100<<10, false), &cannedProvider{"application/json", completion, nil}, ""},
		{"stream-50", chatBody(1<<10, true), &cannedProvider{"text/event-stream", openAIStream(), nil}, ""},
		// The same OpenAI requests to an Anthropic-only upstream: the translation lane.
		{"translated-small-1KB", chatBody(1<<10, false), &cannedProvider{"application/json", anthropicMessage, dialect.Messages}, ""},
		{"translated-stream-50", chatBody(1<<10, true), &cannedProvider{"text/event-stream", anthropicStream(), dialect.Messages}, ""},
		// Responses requests, to a Responses upstream and to an Anthropic one.
		{"responses-1KB", responsesBody(1<<10, false), &cannedProvider{"application/json", response, dialect.Responses}, "/v1/responses"},
		{"responses-translated-1KB", responsesBody(1<<10, false), &cannedProvider{"application/json", anthropicMessage, dialect.Messages}, "/v1/responses"},
		{"responses-translated-stream-50", responsesBody(1<<10, true), &cannedProvider{"text/event-stream", anthropicStream(), dialect.Messages}, "/v1/responses"},
		// Gemini requests to a Gemini upstream: the model in the URL.
		{"gemini-1KB", geminiBody(1 << 10), &cannedProvider{"application/json", geminiAnswer, dialect.Gemini}, "/v1beta/models/bench:generateContent"},
		{"gemini-stream-50", geminiBody(1 << 10), &cannedProvider{"text/event-stream", geminiStream(), dialect.Gemini}, "/v1beta/models/bench:streamGenerateContent?alt=sse"},
		{"gemini-array-50", geminiBody(1 << 10), &cannedProvider{"text/event-stream", geminiStream(), dialect.Gemini}, "/v1beta/models/bench:streamGenerateContent"},
		// Embeddings of 16 texts, 256 dimensions: passed through to an
		// OpenAI-compatible upstream, and translated for Gemini (one
		// batchEmbedContents) and Bedrock's Titan (16 requests).
		{"embeddings-16x256", embedBody(16), &cannedProvider{"application/json", openAIVectors(16, 256), nil}, "/v1/embeddings"},
		{"embeddings-gemini-16x256", embedBody(16), &cannedEmbedder{cannedProvider{"application/json", geminiVectors(16, 256), dialect.Gemini}, embeddings.Gemini}, "/v1/embeddings"},
		{"embeddings-gemini-16x768", embedBody(16), &cannedEmbedder{cannedProvider{"application/json", geminiVectors(16, 768), dialect.Gemini}, embeddings.Gemini}, "/v1/embeddings"},
		{"embeddings-titan-16x256", embedBody(16), &cannedEmbedder{cannedProvider{"application/json", titanVector(256), dialect.Messages}, embeddings.Titan}, "/v1/embeddings"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := benchGateway(b, tc.p)
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.body)))
			for b.Loop() {
				req := httptest.NewRequest("POST", cmp.Or(tc.path, "/v1/chat/completions"), bytes.NewReader(tc.body))
				req.Header.Set("Authorization", "Bearer sk-bench")
				w := &nopWriter{h: make(http.Header)}
				h.ServeHTTP(w, req)
			}
		})
	}
}

func TestStreamTapAllocs(t *testing.T) {
	for name, tc := range map[string]struct {
		stream []byte
		tap    dialect.Tap
	}{
		"anthropic": {anthropicStream(), dialect.Messages.NewTap(false)},
		"openai":    {openAIStream(), dialect.Chat.NewTap(false)},
		"gemini":    {geminiStream(), dialect.Gemini.NewTap(false)},
	} {
		writeEvents(io.Discard, tc.stream, tc.tap, nil) // warm scratch buffers
		if n := testing.AllocsPerRun(50, func() { writeEvents(io.Discard, tc.stream, tc.tap, nil) }); n != 0 {
			t.Errorf("%s: tapping a 50-event stream allocates %v times, want 0", name, n)
		}
	}
}

// FuzzStreamTap feeds arbitrary upstream bytes in arbitrary pieces: the
// relay never panics, and without stripping the client gets exactly the
// complete events the upstream sent, byte for byte.
func FuzzStreamTap(f *testing.F) {
	f.Add(anthropicStream(), uint8(7), false)
	f.Add(openAIStream(), uint8(13), true)
	f.Add([]byte("data: {\"usage\": {\"prompt_tokens\": 1}}\r\n\r\ndata: [DONE]\r\r"), uint8(1), true)
	f.Fuzz(func(t *testing.T, stream []byte, piece uint8, openai bool) {
		tap := dialect.Messages.NewTap(false)
		if openai {
			tap = dialect.Chat.NewTap(false)
		}
		step := int(piece%64) + 1
		var buf, out bytes.Buffer
		consumedTotal := 0
		for i := 0; i < len(stream); i += step {
			buf.Write(stream[i:min(i+step, len(stream))])
			n, err := writeEvents(&out, buf.Bytes(), tap, nil)
			if err != nil {
				t.Fatal(err)
			}
			buf.Next(n)
			consumedTotal += n
		}
		if !bytes.Equal(out.Bytes(), stream[:consumedTotal]) {
			t.Fatalf("relayed bytes differ from the upstream's:\n got %q\nwant %q", out.Bytes(), stream[:consumedTotal])
		}
		_ = tap.Usage()
		tap.Close(true, "x")
	})
}
