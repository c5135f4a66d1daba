package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// streamContentEvents is how many content deltas every streamed answer has.
const streamContentEvents = 50

// runUpstream is the hidden "upstream" subcommand: a fake LLM provider that
// answers OpenAI Chat Completions, Anthropic Messages and embeddings
// requests as fast as it can. It runs in its own process so that its CPU
// time is never counted against a proxy.
func runUpstream(args []string) int {
	fs := flag.NewFlagSet("upstream", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (loopback only)")
	exitOnEOF := fs.Bool("exit-on-stdin-eof", false, "exit when standard input reaches EOF (the parent went away)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := requireLoopbackListen(*listen); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		return 1
	}
	if *exitOnEOF {
		go exitOnStdinEOF()
	}
	fmt.Printf("LISTEN %s\n", ln.Addr())
	srv := &http.Server{
		Handler:           newFakeUpstream(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		return 1
	}
	return 0
}

// exitOnStdinEOF ends a helper process once its parent's end of the stdin
// pipe closes, so helpers never outlive the benchmark, however it ends.
func exitOnStdinEOF() {
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// requireLoopbackListen refuses listen addresses outside 127.0.0.0/8 and ::1.
func requireLoopbackListen(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("refusing non-loopback address %q", addr)
}

// fakeUpstream holds every response body pre-rendered; only the token counts
// that depend on the request size are formatted per request.
type fakeUpstream struct {
	bufs sync.Pool

	openaiChunks      [][]byte // role chunk, content chunks, finish chunk
	openaiChunksUsage [][]byte // same with "usage":null, as sent when include_usage is on
	anthropicMiddle   [][]byte // content_block_start, deltas, content_block_stop
	responsesEvents   [][]byte // created … output_item.done: all but the terminal event
	responsesText     string   // the streamed text, as a JSON string
	bedrockMiddle     [][]byte // anthropicMiddle, message_delta and message_stop as event-stream frames
	geminiChunks      [][]byte // a Gemini stream's text events, all but the last, up to their usage
	embed             *fakeEmbeddings
}

// bedrockFrame is an Anthropic stream event (its data) as Bedrock frames it.
func bedrockFrame(data []byte) []byte {
	var b bytes.Buffer
	eventstream.NewEncoder().Encode(&b, eventstream.Message{
		Headers: eventstream.Headers{
			{Name: ":event-type", Value: eventstream.StringValue("chunk")},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("event")},
		},
		Payload: []byte(`{"bytes":"` + base64.StdEncoding.EncodeToString(data) + `"}`),
	})
	return b.Bytes()
}

// sseDataOf is the data line of a pre-rendered SSE event.
func sseDataOf(ev []byte) []byte {
	_, data, _ := bytes.Cut(ev, []byte("data: "))
	return bytes.TrimRight(data, "\n")
}

var benchWords = strings.Fields(`The gateway forwards each request to the provider and relays
the answer as it arrives while counting tokens for budgets and logs so that
latency stays low and nothing is buffered longer than needed today`)

func newFakeUpstream() *fakeUpstream {
	u := &fakeUpstream{embed: newFakeEmbeddings()}
	u.bufs.New = func() any { return new(bytes.Buffer) }

	mk := func(withUsage bool) [][]byte {
		usage := ""
		if withUsage {
			usage = `,"usage":null`
		}
		head := `data: {"id":"chatcmpl-bench0001","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":`
		var out [][]byte
		out = append(out, []byte(head+`{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]`+usage+"}\n\n"))
		for i := 0; i < streamContentEvents; i++ {
			w := benchWords[i%len(benchWords)] + " "
			out = append(out, []byte(head+`{"content":`+strconv.Quote(w)+`},"logprobs":null,"finish_reason":null}]`+usage+"}\n\n"))
		}
		out = append(out, []byte(head+`{},"logprobs":null,"finish_reason":"stop"}]`+usage+"}\n\n"))
		return out
	}
	u.openaiChunks = mk(false)
	u.openaiChunksUsage = mk(true)

	u.anthropicMiddle = append(u.anthropicMiddle, []byte("event: content_block_start\n"+
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`+"\n\n"))
	u.anthropicMiddle = append(u.anthropicMiddle, []byte("event: ping\n"+`data: {"type":"ping"}`+"\n\n"))
	for i := 0; i < streamContentEvents; i++ {
		w := benchWords[i%len(benchWords)] + " "
		u.anthropicMiddle = append(u.anthropicMiddle, []byte("event: content_block_delta\n"+
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+strconv.Quote(w)+"}}\n\n"))
	}
	u.anthropicMiddle = append(u.anthropicMiddle, []byte("event: content_block_stop\n"+
		`data: {"type":"content_block_stop","index":0}`+"\n\n"))

	for _, ev := range u.anthropicMiddle {
		u.bedrockMiddle = append(u.bedrockMiddle, bedrockFrame(sseDataOf(ev)))
	}
	u.bedrockMiddle = append(u.bedrockMiddle,
		bedrockFrame(fmt.Appendf(nil, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, streamContentEvents)),
		bedrockFrame([]byte(`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":300,"outputTokenCount":50,"invocationLatency":100,"firstByteLatency":10}}`)))

	for i := 0; i < streamContentEvents; i++ {
		w := benchWords[i%len(benchWords)] + " "
		u.geminiChunks = append(u.geminiChunks, []byte(`data: {"candidates":[{"content":{"parts":[{"text":`+strconv.Quote(w)+`}],"role":"model"},"index":0}],`))
	}

	seq := 0
	rev := func(typ, rest string) {
		u.responsesEvents = append(u.responsesEvents, fmt.Appendf(nil, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d%s}\n\n", typ, typ, seq, rest))
		seq++
	}
	resp := `,"response":{"id":"resp_bench0001","object":"response","created_at":1700000000,"status":"in_progress","model":"gpt-bench-codex","output":[],"usage":null}`
	rev("response.created", resp)
	rev("response.in_progress", resp)
	rev("response.output_item.added", `,"output_index":0,"item":{"id":"msg_bench0001","type":"message","status":"in_progress","role":"assistant","content":[]}`)
	rev("response.content_part.added", `,"item_id":"msg_bench0001","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`)
	var text strings.Builder
	for i := 0; i < streamContentEvents; i++ {
		w := benchWords[i%len(benchWords)] + " "
		text.WriteString(w)
		rev("response.output_text.delta", `,"item_id":"msg_bench0001","output_index":0,"content_index":0,"delta":`+strconv.Quote(w)+`,"logprobs":[]`)
	}
	all := strconv.Quote(text.String())
	rev("response.output_text.done", `,"item_id":"msg_bench0001","output_index":0,"content_index":0,"text":`+all+`,"logprobs":[]`)
	rev("response.content_part.done", `,"item_id":"msg_bench0001","output_index":0,"content_index":0,"part":{"type":"output_text","text":`+all+`,"annotations":[],"logprobs":[]}`)
	rev("response.output_item.done", `,"output_index":0,"item":{"id":"msg_bench0001","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":`+all+`,"annotations":[],"logprobs":[]}]}`)
	u.responsesText = all
	return u
}

// responseJSON is a completed response with one message of text (a JSON
// string) and the given usage.
func responseJSON(text string, input, output int) []byte {
	return fmt.Appendf(nil, `{"id":"resp_bench0001","object":"response","created_at":1700000000,"status":"completed","model":"gpt-bench-codex","output":[{"id":"msg_bench0001","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[],"logprobs":[]}]}],"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}`,
		text, input, output, input+output)
}

// answerText is the ~300 byte assistant message of non-streaming answers,
// which brings the whole JSON document to about 600 bytes.
var answerText = strconv.Quote(strings.Repeat("A gateway adds routing, auth and accounting in front of a model. ", 5))

func (u *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	var api string
	bedrockStream := false
	if strings.HasPrefix(r.URL.Path, "/model/") {
		if err := bedrockSigned(r); err != nil {
			bedrockError(w, http.StatusForbidden, "UnrecognizedClientException", err.Error())
			return
		}
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1beta/models/"):
		u.serveGemini(w, r)
		return
	case r.URL.Path == "/model/"+upstreamModelEmbedTitan+"/invoke":
		api = apiEmbeddings
	case strings.HasSuffix(r.URL.Path, "/embeddings"):
		api = apiEmbeddings
	case strings.HasPrefix(r.URL.Path, "/model/") && strings.HasSuffix(r.URL.Path, "/invoke"):
		api = apiAnthropic // Bedrock: the Messages body, the stream in the path
	case strings.HasPrefix(r.URL.Path, "/model/") && strings.HasSuffix(r.URL.Path, "/invoke-with-response-stream"):
		api, bedrockStream = apiAnthropic, true
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		api = apiOpenAI
	case strings.HasSuffix(r.URL.Path, "/v1/messages"):
		api = apiAnthropic
	case strings.HasSuffix(r.URL.Path, "/v1/responses"):
		api = apiResponses
	default:
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"method not allowed"}}`, http.StatusMethodNotAllowed)
		return
	}
	buf := u.bufs.Get().(*bytes.Buffer)
	defer u.bufs.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	body := buf.Bytes()
	if api == apiEmbeddings {
		if strings.HasPrefix(r.URL.Path, "/model/") {
			u.embed.serveTitan(w, body)
		} else {
			u.embed.serveOpenAI(w, body)
		}
		return
	}
	promptTokens := len(body)/4 + 1
	stream := jsonTrueField(body, "stream") || bedrockStream

	switch {
	case bedrockStream:
		h := w.Header()
		h.Set("Content-Type", "application/vnd.amazon.eventstream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		frames := append([][]byte{bedrockFrame(fmt.Appendf(nil, `{"type":"message_start","message":{"id":"msg_bench0001","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, promptTokens))},
			u.bedrockMiddle...)
		for _, f := range frames {
			if _, err := w.Write(f); err != nil || rc.Flush() != nil {
				return
			}
		}
	case api == apiOpenAI && !stream:
		out := fmt.Appendf(nil, `{"id":"chatcmpl-bench0001","object":"chat.completion","created":1700000000,"model":"gpt-bench","system_fingerprint":"fp_bench","choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":64,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
			answerText, promptTokens, promptTokens+64)
		writeJSON(w, out)
	case api == apiAnthropic && !stream:
		out := fmt.Appendf(nil, `{"id":"msg_bench0001","type":"message","role":"assistant","model":"claude-bench","content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":64}}`,
			answerText, promptTokens)
		writeJSON(w, out)
	case api == apiResponses && !stream:
		writeJSON(w, responseJSON(answerText, promptTokens, 64))
	case api == apiResponses:
		sw := startSSE(w)
		for _, e := range u.responsesEvents {
			sw.event(e)
		}
		done := responseJSON(u.responsesText, promptTokens, streamContentEvents)
		sw.event(fmt.Appendf(nil, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":%d,\"response\":%s}\n\n", len(u.responsesEvents), done))
	case api == apiOpenAI:
		includeUsage := jsonTrueField(body, "include_usage")
		chunks := u.openaiChunks
		if includeUsage {
			chunks = u.openaiChunksUsage
		}
		sw := startSSE(w)
		if events, gap, ok := heldShape(body); ok {
			// A held stream: events content chunks, gap apart, then the
			// last chunk (the finish reason).
			content := chunks[:len(chunks)-1]
			if !paced(r.Context(), events, gap, func(i int) { sw.event(content[min(i, len(content)-1)]) }) {
				return
			}
			chunks = chunks[len(chunks)-1:]
		}
		for _, c := range chunks {
			sw.event(c)
		}
		if includeUsage {
			sw.event(fmt.Appendf(nil, `data: {"id":"chatcmpl-bench0001","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","system_fingerprint":"fp_bench","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
				promptTokens, streamContentEvents, promptTokens+streamContentEvents))
		}
		sw.event([]byte("data: [DONE]\n\n"))
	default: // anthropic streaming
		sw := startSSE(w)
		sw.event(fmt.Appendf(nil, "event: message_start\n"+`data: {"type":"message_start","message":{"id":"msg_bench0001","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`+"\n\n", promptTokens))
		middle := u.anthropicMiddle
		if events, gap, ok := heldShape(body); ok {
			// A held stream (metadata.user_id, translated from the
			// chat's user): its block's start, events deltas gap apart,
			// then its stop.
			sw.event(middle[0])
			if !paced(r.Context(), events, gap, func(i int) { sw.event(middle[1+min(i, len(middle)-3)]) }) {
				return
			}
			middle = middle[len(middle)-1:]
		}
		for _, c := range middle {
			sw.event(c)
		}
		sw.event(fmt.Appendf(nil, "event: message_delta\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`+"\n\n", streamContentEvents))
		sw.event([]byte("event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"))
	}
}

// serveGemini answers the Gemini API's generateContent and
// streamGenerateContent (alt=sse: CRLF-separated events), and
// batchEmbedContents for the embedding model, to a translated
// request and to a Gemini client's own body alike. The model in the URL
// must be the upstream's, so that a gateway which passes a Gemini
// client's request on without rewriting it is caught by the answer
// check rather than measured.
func (u *fakeUpstream) serveGemini(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	switch {
	case r.Method != http.MethodPost:
		geminiError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed")
		return
	case method == "batchEmbedContents" && model != upstreamModelEmbedGemini,
		method != "batchEmbedContents" && model != upstreamModelGemini:
		geminiError(w, http.StatusNotFound, "NOT_FOUND", "models/"+model+" is not found")
		return
	case method != "generateContent" && method != "streamGenerateContent" && method != "batchEmbedContents":
		geminiError(w, http.StatusNotFound, "NOT_FOUND", "no method "+method)
		return
	case method == "streamGenerateContent" && r.URL.Query().Get("alt") != "sse":
		// Without alt=sse the API streams one JSON array, which no
		// tollgate lane reads.
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "this fake upstream streams with alt=sse only")
		return
	}
	buf := u.bufs.Get().(*bytes.Buffer)
	defer u.bufs.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if method == "batchEmbedContents" {
		u.embed.serveGemini(w, buf.Bytes())
		return
	}
	promptTokens := buf.Len()/4 + 1
	usage := fmt.Sprintf(`"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":%d,"totalTokenCount":%d}`, promptTokens, streamContentEvents, promptTokens+streamContentEvents)
	if method == "generateContent" {
		writeJSON(w, []byte(`{"candidates":[{"content":{"parts":[{"text":`+answerText+`}],"role":"model"},"finishReason":"STOP","index":0}],`+usage+`,"modelVersion":"gemini-bench","responseId":"bench1"}`))
		return
	}
	// Every event carries the usage so far, as the Gemini API's do: a
	// gateway reads it from each (the prompt's count comes first).
	tail := fmt.Appendf(nil, `"usageMetadata":{"promptTokenCount":%d,"totalTokenCount":%d},"modelVersion":"gemini-bench","responseId":"bench1"}`+"\r\n\r\n", promptTokens, promptTokens)
	sw := startSSE(w)
	ev := u.bufs.Get().(*bytes.Buffer)
	defer u.bufs.Put(ev)
	for _, c := range u.geminiChunks {
		ev.Reset()
		ev.Write(c)
		ev.Write(tail)
		sw.event(ev.Bytes())
	}
	sw.event([]byte(`data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],` + usage + `,"modelVersion":"gemini-bench","responseId":"bench1"}` + "\r\n\r\n"))
}

// geminiError answers in the Gemini API's error envelope.
func geminiError(w http.ResponseWriter, status int, code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"status":%q}}`, status, msg, code)
}

func writeJSON(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// sseWriter writes one event at a time and flushes after each, with no
// pause in between: the upstream is as fast as the loopback allows.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	ok bool
}

func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w), ok: true}
}

func (s *sseWriter) event(b []byte) {
	if !s.ok {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.ok = false
		return
	}
	if err := s.rc.Flush(); err != nil {
		s.ok = false
	}
}

// jsonTrueField reports whether body holds `"key": true` anywhere. A key
// inside a JSON string value is escaped (\"key\"), so it cannot match.
func jsonTrueField(body []byte, key string) bool {
	pat := []byte(`"` + key + `"`)
	for off := 0; off < len(body); {
		i := bytes.Index(body[off:], pat)
		if i < 0 {
			return false
		}
		k := skipSpace(body, off+i+len(pat))
		if k < len(body) && body[k] == ':' {
			k = skipSpace(body, k+1)
			if bytes.HasPrefix(body[k:], []byte("true")) {
				return true
			}
		}
		off += i + len(pat)
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// paced calls send(i) for i < events, the first at once and the others
// gap apart; false if ctx ended first.
func paced(ctx context.Context, events int, gap time.Duration, send func(i int)) bool {
	t := time.NewTimer(0)
	defer t.Stop()
	for i := range events {
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
		send(i)
		t.Reset(gap)
	}
	return true
}

// heldShape reads a held stream's shape from the body's user field,
// "held:EVENTS:GAPMS".
func heldShape(body []byte) (events int, gap time.Duration, ok bool) {
	i := bytes.Index(body, []byte(`"held:`))
	if i < 0 {
		return 0, 0, false
	}
	rest := body[i+len(`"held:`):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return 0, 0, false
	}
	var ms int
	if _, err := fmt.Sscanf(string(rest[:end]), "%d:%d", &events, &ms); err != nil || events < 1 || ms < 0 {
		return 0, 0, false
	}
	return events, time.Duration(ms) * time.Millisecond, true
}
