package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	apiOpenAI    = "openai"
	apiAnthropic = "anthropic"
	apiResponses = "responses"
	// apiGemini is the Gemini API's generateContent: the model and whether
	// to stream are in the URL, the key in x-goog-api-key.
	apiGemini = "gemini"
	// apiEmbeddings is OpenAI's /v1/embeddings.
	apiEmbeddings = "embeddings"
)

// workload is one kind of request sent to every target.
type workload struct {
	Name     string
	API      string
	Stream   bool
	BodySize int     // approximate request body size in bytes
	NFactor  float64 // share of -n used for its latency phase (slower requests get fewer)
	Desc     string
	// Translated sends the request to the tollgate model whose upstream
	// speaks the other protocol, so it goes through the translation lane.
	// Only gateways can serve it; other targets are skipped.
	Translated bool
	// Bedrock sends the request to the tollgate model on the fake
	// upstream's Bedrock endpoints (SigV4, event-stream frames). Only
	// gateways can serve it.
	Bedrock bool
	// Gemini sends the request to the tollgate model on the fake
	// upstream's Gemini endpoints (the translation lane). Only gateways
	// can serve it.
	Gemini bool
	// NoCache sends a translated request to the twin model without the
	// prompt-cache work (no breakpoints, no conversation key).
	NoCache bool
	// Agent shapes the body as a coding agent's: tools, a system prompt
	// and a tool loop, no end-user id, so the gateway keys the
	// conversation by how it starts.
	Agent bool
	// Versus is the workload this one's CPU per request is divided by,
	// target by target and round by round, when both are in the run: the
	// same client's pass-through lane for a translated workload, the chat
	// pass-through lane for another protocol's.
	Versus string
	// User is the OpenAI body's user field ("" a fixed one); the fake
	// upstream reads "held:EVENTS:GAPMS" as a slow stream's shape.
	User string
}

var allWorkloads = []workload{
	{Name: "small", API: apiOpenAI, BodySize: 1 << 10, NFactor: 1, Desc: "OpenAI chat, ~1 KB body, non-streaming"},
	{Name: "large", API: apiOpenAI, BodySize: 100 << 10, NFactor: 0.5, Desc: "OpenAI chat, ~100 KB body (one long user message), non-streaming"},
	{Name: "stream", API: apiOpenAI, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Desc: "OpenAI chat, ~1 KB body, stream:true, 50 content events"},
	{Name: "anthropic", API: apiAnthropic, BodySize: 1 << 10, NFactor: 1, Desc: "Anthropic messages, ~1 KB body, non-streaming"},
	{Name: "stream-anthropic", API: apiAnthropic, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Desc: "Anthropic messages, ~1 KB body, stream:true, 50 text deltas"},
	{Name: "large-translated", API: apiOpenAI, BodySize: 100 << 10, NFactor: 0.5, Translated: true, Agent: true, Versus: "large-translated-nocache", Desc: "OpenAI chat, ~100 KB agent tool loop (tools, system, 40 turns), non-streaming, to a model with an Anthropic upstream: breakpoints placed, conversation keyed"},
	{Name: "large-translated-nocache", API: apiOpenAI, BodySize: 100 << 10, NFactor: 0.5, Translated: true, Agent: true, NoCache: true, Desc: "large-translated, to the same upstream through a model with prompt_cache off and routing not sticky"},
	{Name: "small-translated", API: apiOpenAI, BodySize: 1 << 10, NFactor: 1, Translated: true, Versus: "small", Desc: "OpenAI chat, ~1 KB body, non-streaming, to a model with an Anthropic upstream (translation lane)"},
	{Name: "stream-translated", API: apiOpenAI, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Translated: true, Versus: "stream", Desc: "OpenAI chat, ~1 KB body, stream:true, 50 events, to a model with an Anthropic upstream (translation lane)"},
	{Name: "bedrock", API: apiAnthropic, BodySize: 1 << 10, NFactor: 1, Bedrock: true, Versus: "anthropic", Desc: "Anthropic messages, ~1 KB body, non-streaming, to Claude on a fake Bedrock (signed with SigV4)"},
	{Name: "stream-bedrock", API: apiAnthropic, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Bedrock: true, Versus: "stream-anthropic", Desc: "Anthropic messages, ~1 KB body, stream:true, 50 text deltas, from a fake Bedrock's event-stream frames"},
	{Name: "gemini", API: apiAnthropic, BodySize: 1 << 10, NFactor: 1, Gemini: true, Versus: "anthropic", Desc: "Anthropic messages, ~1 KB body, non-streaming, to a model on a fake Gemini API (translation lane)"},
	{Name: "stream-gemini", API: apiAnthropic, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Gemini: true, Versus: "stream-anthropic", Desc: "Anthropic messages, ~1 KB body, stream:true, 50 text parts from a fake Gemini API (translation lane)"},
	{Name: "responses", API: apiResponses, BodySize: 1 << 10, NFactor: 1, Versus: "small", Desc: "OpenAI Responses, ~1 KB body, non-streaming"},
	{Name: "stream-responses", API: apiResponses, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Versus: "stream", Desc: "OpenAI Responses, ~1 KB body, stream:true, 50 text deltas"},
	{Name: "responses-translated", API: apiResponses, BodySize: 1 << 10, NFactor: 1, Translated: true, Versus: "responses", Desc: "OpenAI Responses, ~1 KB body, non-streaming, to a model with an Anthropic upstream (translation lane)"},
	{Name: "stream-responses-translated", API: apiResponses, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Translated: true, Versus: "stream-responses", Desc: "OpenAI Responses, ~1 KB body, stream:true, 50 events, to a model with an Anthropic upstream (translation lane)"},
	{Name: "responses-gemini", API: apiResponses, BodySize: 1 << 10, NFactor: 1, Gemini: true, Versus: "responses", Desc: "OpenAI Responses, ~1 KB body, non-streaming, to a model on a fake Gemini API (translation lane)"},
	{Name: "stream-responses-gemini", API: apiResponses, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Gemini: true, Versus: "stream-responses", Desc: "OpenAI Responses, ~1 KB body, stream:true, 50 text parts from a fake Gemini API (translation lane)"},
	{Name: "gemini-client", API: apiGemini, BodySize: 1 << 10, NFactor: 1, Versus: "small", Desc: "Gemini generateContent, ~1 KB body, to a model on a fake Gemini API (pass-through lane)"},
	{Name: "stream-gemini-client", API: apiGemini, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Versus: "stream", Desc: "Gemini streamGenerateContent?alt=sse, ~1 KB body, 50 text parts from a fake Gemini API (pass-through lane)"},
	{Name: "gemini-client-translated", API: apiGemini, BodySize: 1 << 10, NFactor: 1, Translated: true, Versus: "gemini-client", Desc: "Gemini generateContent, ~1 KB body, to a model with an Anthropic upstream (translation lane)"},
	{Name: "stream-gemini-client-translated", API: apiGemini, Stream: true, BodySize: 1 << 10, NFactor: 0.5, Translated: true, Versus: "stream-gemini-client", Desc: "Gemini streamGenerateContent?alt=sse, ~1 KB body, 50 text deltas from an Anthropic upstream (translation lane)"},
	{Name: "embeddings", API: apiEmbeddings, BodySize: embedBodySize, NFactor: 0.5, Versus: "small", Desc: "OpenAI embeddings, 16 texts of 60 bytes, answered with 16 vectors of 1536 floats (~300 KB) and usage (pass-through lane)"},
	{Name: "embeddings-gemini", API: apiEmbeddings, BodySize: embedBodySize, NFactor: 0.5, Gemini: true, Versus: "embeddings", Desc: "OpenAI embeddings, 16 texts, to a model on a fake Gemini API: one batchEmbedContents, 16 vectors of 768 values (translation lane)"},
	{Name: "embeddings-bedrock", API: apiEmbeddings, BodySize: embedBodySize, NFactor: 0.5, Bedrock: true, Versus: "embeddings", Desc: "OpenAI embeddings, 16 texts, to Titan Text Embeddings v2 on a fake Bedrock: 16 signed invokes, 8 at a time, each one vector of 1024 values (translation lane)"},
}

func workloadByName(name string) (workload, bool) {
	for _, w := range allWorkloads {
		if w.Name == name {
			return w, true
		}
	}
	return workload{}, false
}

// path is the request's path (and query) for the given model: only the
// Gemini API names the model in the URL.
func (w workload) path(model string) string {
	switch w.API {
	case apiAnthropic:
		return "/v1/messages"
	case apiResponses:
		return "/v1/responses"
	case apiEmbeddings:
		return "/v1/embeddings"
	case apiGemini:
		if w.Stream {
			return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
		}
		return "/v1beta/models/" + model + ":generateContent"
	}
	return "/v1/chat/completions"
}

// fillerText returns deterministic prose of exactly n bytes.
func fillerText(n int) string {
	const para = "Please review the following service description and summarise the main risks, " +
		"the operational costs and the steps needed to roll it out safely across regions. "
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(para)
	}
	return b.String()[:n]
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// geminiContent is a Gemini API message: a role and its parts.
type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text string `json:"text"`
}

// body renders the request body for the given model name, padded to about
// BodySize bytes. Only "model" differs between targets (a Gemini body has
// none: its model is in the URL).
func (w workload) body(model string) []byte {
	const system = "You are a careful assistant for an engineering team. Answer concisely, cite the parts of the input you rely on, and say when you are unsure."
	render := func(fill int) []byte {
		var v any
		switch w.API {
		case apiAnthropic:
			type metadata struct {
				UserID string `json:"user_id"`
			}
			var md *metadata
			if w.User != "" {
				md = &metadata{w.User}
			}
			v = struct {
				Model     string        `json:"model"`
				MaxTokens int           `json:"max_tokens"`
				System    string        `json:"system"`
				Messages  []chatMessage `json:"messages"`
				Stream    bool          `json:"stream,omitempty"`
				Metadata  *metadata     `json:"metadata,omitempty"`
			}{model, 256, system, []chatMessage{{"user", fillerText(fill)}}, w.Stream, md}
		case apiGemini:
			type generationConfig struct {
				Temperature     float64 `json:"temperature"`
				MaxOutputTokens int     `json:"maxOutputTokens"`
			}
			v = struct {
				SystemInstruction geminiContent    `json:"systemInstruction"`
				Contents          []geminiContent  `json:"contents"`
				GenerationConfig  generationConfig `json:"generationConfig"`
			}{geminiContent{Parts: []geminiPart{{system}}}, []geminiContent{{"user", []geminiPart{{fillerText(fill)}}}}, generationConfig{0.7, 256}}
		case apiResponses:
			v = struct {
				Model           string        `json:"model"`
				Instructions    string        `json:"instructions"`
				Input           []chatMessage `json:"input"`
				MaxOutputTokens int           `json:"max_output_tokens"`
				Stream          bool          `json:"stream,omitempty"`
				Store           bool          `json:"store"`
			}{model, system, []chatMessage{{"user", fillerText(fill)}}, 256, w.Stream, false}
		default:
			msgs := []chatMessage{{"system", system}, {"user", fillerText(fill)}}
			if w.BodySize > 8<<10 {
				msgs = msgs[1:] // the large body is one long user message
			}
			v = struct {
				Model       string        `json:"model"`
				Messages    []chatMessage `json:"messages"`
				Temperature float64       `json:"temperature"`
				MaxTokens   int           `json:"max_tokens"`
				Stream      bool          `json:"stream,omitempty"`
				User        string        `json:"user"`
			}{model, msgs, 0.7, 256, w.Stream, cmp.Or(w.User, "bench-user-0001")}
		}
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	if w.Agent {
		return agentBody(model, w.BodySize)
	}
	if w.API == apiEmbeddings {
		return embeddingsBody(model) // its size is its texts'
	}
	base := len(render(0))
	return render(max(0, w.BodySize-base))
}

// agentBody is a coding agent's Chat request of about size bytes: eight
// tools, a long system prompt and a tool loop, with no user id.
func agentBody(model string, size int) []byte {
	type fn struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	type tool struct {
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	type msg struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCalls  []call `json:"tool_calls,omitempty"`
		ToolCallID string `json:"tool_call_id,omitempty"`
	}
	var tools []tool
	for i := range 8 {
		tools = append(tools, tool{"function", fn{fmt.Sprintf("tool_%d", i), fillerText(400),
			map[string]any{"type": "object", "properties": map[string]any{"path": map[string]string{"type": "string"}}}}})
	}
	msgs := []msg{{Role: "system", Content: fillerText(8 << 10)}, {Role: "user", Content: "Fix the failing test in the ledger package."}}
	render := func() []byte {
		b, err := json.Marshal(struct {
			Model     string `json:"model"`
			Messages  []msg  `json:"messages"`
			Tools     []tool `json:"tools"`
			MaxTokens int    `json:"max_tokens"`
		}{model, msgs, tools, 256})
		if err != nil {
			panic(err)
		}
		return b
	}
	for i := 0; ; i++ {
		if b := render(); len(b) >= size {
			last := &msgs[len(msgs)-1]
			if over := len(b) - size; over < len(last.Content) {
				last.Content = fillerText(len(last.Content) - over) // the last tool output, cut to the size
				return render()
			}
			return b
		}
		c := call{ID: fmt.Sprintf("call_%d", i), Type: "function"}
		c.Function.Name, c.Function.Arguments = "tool_1", fmt.Sprintf(`{"path":"f%d.go"}`, i)
		msgs = append(msgs, msg{Role: "assistant", Content: "Reading.", ToolCalls: []call{c}},
			msg{Role: "tool", ToolCallID: c.ID, Content: fillerText(2 << 10)})
	}
}

// reqSpec is one fully prepared request: URL, headers and body are fixed.
type reqSpec struct {
	url    string
	header http.Header
	body   []byte
	stream bool
	sent   *atomic.Int64 // requests sent to the target, for per-request log size
}

func newReqSpec(t *target, w workload) *reqSpec {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	model := upstreamModelOpenAI
	key := tollgateMasterKey
	if t.key != "" {
		key = t.key
	}
	switch w.API {
	case apiAnthropic:
		h.Set("x-api-key", key)
		h.Set("anthropic-version", "2023-06-01")
		model = upstreamModelAnthr
		if t.gateway {
			model = tollgateModelAnthr
		}
	case apiGemini:
		h.Set("x-goog-api-key", key)
		model = upstreamModelGemini
		if t.gateway {
			model = tollgateModelGemini
		}
	default:
		h.Set("Authorization", "Bearer "+key)
		switch {
		case w.API == apiResponses && t.gateway:
			model = tollgateModelResp
		case w.API == apiResponses:
			model = upstreamModelResp
		case t.gateway:
			model = tollgateModelOpenAI
		}
	}
	if w.Bedrock && t.gateway {
		model = tollgateModelBedrock
	}
	if w.Gemini && t.gateway {
		model = tollgateModelGemini
	}
	if w.Translated && t.gateway {
		// Another protocol's model: the gateway translates both ways.
		model = map[string]string{apiOpenAI: tollgateModelAnthr, apiAnthropic: tollgateModelOpenAI, apiResponses: tollgateModelAnthr, apiGemini: tollgateModelAnthr}[w.API]
		if w.NoCache {
			model = tollgateModelNoCache
		}
	}
	if w.API == apiEmbeddings {
		model = w.embedModel(t.gateway)
	}
	return &reqSpec{url: t.BaseURL + w.path(model), header: h, body: w.body(model), stream: w.Stream, sent: &t.sent}
}

// newLoadClient returns the HTTP/1.1 keep-alive client used for one target.
// Proxy is nil: every request goes straight to 127.0.0.1.
func newLoadClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		Timeout: 60 * time.Second,
	}
}

// do sends one request and reads the whole response. total is the time until
// the last byte; for streams, ttfb is the time until the first complete SSE
// event (the first blank line) has arrived.
func (s *reqSpec) do(ctx context.Context, client *http.Client, buf []byte) (total, ttfb time.Duration, err error) {
	start := time.Now()
	s.sent.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(s.body))
	if err != nil {
		return 0, 0, err
	}
	req.Header = s.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, 0, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
	}
	wantEvent := s.stream
	prevNL := false
	for {
		n, rerr := resp.Body.Read(buf)
		if wantEvent && n > 0 {
			for _, c := range buf[:n] {
				if c == '\r' {
					continue // a Gemini stream ends its lines with CRLF
				}
				if c == '\n' && prevNL {
					ttfb = time.Since(start)
					wantEvent = false
					break
				}
				prevNL = c == '\n'
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return 0, 0, rerr
		}
	}
	return time.Since(start), ttfb, nil
}

// seqResult is the outcome of the concurrency-1 latency phase.
type seqResult struct {
	totals, ttfbs []time.Duration
	errors        int
	firstErr      error
}

// runSequential sends warm requests, then n timed requests, one at a time.
func runSequential(ctx context.Context, client *http.Client, s *reqSpec, warm, n int) seqResult {
	buf := make([]byte, 32<<10)
	var r seqResult
	for i := 0; i < warm && ctx.Err() == nil; i++ {
		_, _, _ = s.do(ctx, client, buf)
	}
	r.totals = make([]time.Duration, 0, n)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		total, ttfb, err := s.do(ctx, client, buf)
		if err != nil {
			r.errors++
			if r.firstErr == nil {
				r.firstErr = err
			}
			continue
		}
		r.totals = append(r.totals, total)
		if s.stream {
			r.ttfbs = append(r.ttfbs, ttfb)
		}
	}
	return r
}

// concResult is the outcome of a fixed-duration concurrent phase.
type concResult struct {
	requests int64 // completed with 200 and a fully read body
	errors   int64
	elapsed  time.Duration
	lat      []time.Duration
	firstErr error
}

// runConcurrent runs c workers, each sending requests back to back over its
// own keep-alive connection, until d has passed. Requests in flight at the
// deadline are completed and counted; elapsed runs until the last one ends,
// so requests/elapsed is the throughput and every counted request's CPU
// falls inside the measured window.
func runConcurrent(ctx context.Context, client *http.Client, s *reqSpec, c int, d time.Duration) concResult {
	var (
		mu  sync.Mutex
		res concResult
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			lat := make([]time.Duration, 0, 1024)
			var errs int64
			var firstErr error
			for ctx.Err() == nil && time.Now().Before(deadline) {
				total, _, err := s.do(ctx, client, buf)
				if err != nil {
					errs++
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				lat = append(lat, total)
			}
			mu.Lock()
			res.requests += int64(len(lat))
			res.errors += errs
			res.lat = append(res.lat, lat...)
			if res.firstErr == nil {
				res.firstErr = firstErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// percentile returns the nearest-rank p-quantile (0 < p <= 1) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// verify sends one request and checks that the answer has the shape the fake
// upstream produces, so that no target is timed while it returns errors or
// mangled streams. A non-fatal oddity is returned as warn.
func verify(ctx context.Context, client *http.Client, s *reqSpec, w workload) (warn string, err error) {
	s.sent.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(s.body))
	if err != nil {
		return "", err
	}
	req.Header = s.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, truncate(string(body), 300))
	}
	if w.API == apiGemini && !w.Stream {
		return "", checkGeminiAnswer(body)
	}
	if w.API == apiEmbeddings {
		return "", checkEmbeddingsAnswer(body, w.embedDims())
	}
	if !w.Stream {
		var v struct {
			Object string `json:"object"`
			Type   string `json:"type"`
			Status string `json:"status"`
			Output []struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"output"`
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return "", fmt.Errorf("response is not JSON: %v: %s", err, truncate(string(body), 200))
		}
		if w.API == apiOpenAI && (v.Object != "chat.completion" || len(v.Choices) == 0 || v.Choices[0].Message.Content == "") {
			return "", fmt.Errorf("not a chat.completion: %s", truncate(string(body), 200))
		}
		if w.API == apiAnthropic && (v.Type != "message" || len(v.Content) == 0) {
			return "", fmt.Errorf("not an Anthropic message: %s", truncate(string(body), 200))
		}
		if w.API == apiResponses && (v.Object != "response" || v.Status != "completed" || len(v.Output) == 0 || len(v.Output[0].Content) == 0) {
			return "", fmt.Errorf("not a completed response: %s", truncate(string(body), 200))
		}
		return "", nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return "", fmt.Errorf("stream answered with Content-Type %q", ct)
	}
	if w.API == apiGemini {
		return checkGeminiStream(body)
	}
	var contentEvents, usageChunks int
	var terminated bool
	err = eachSSEData(body, func(data string) error {
		if data == "[DONE]" {
			terminated = true
			return nil
		}
		var ev struct {
			Type    string `json:"type"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
			Delta json.RawMessage `json:"delta"` // Anthropic: an object; Responses: a string
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("bad SSE data line %q: %v", truncate(data, 120), err)
		}
		switch w.API {
		case apiOpenAI:
			if len(ev.Choices) > 0 && ev.Choices[0].Delta.Content != "" {
				contentEvents++
			}
			if len(ev.Choices) == 0 && len(ev.Usage) > 0 && string(ev.Usage) != "null" {
				usageChunks++
			}
		case apiAnthropic:
			var d struct {
				Type string `json:"type"`
			}
			if ev.Type == "content_block_delta" && json.Unmarshal(ev.Delta, &d) == nil && d.Type == "text_delta" {
				contentEvents++
			}
			if ev.Type == "message_stop" {
				terminated = true
			}
		case apiResponses:
			if ev.Type == "response.output_text.delta" {
				contentEvents++
			}
			if ev.Type == "response.completed" {
				terminated = true
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if contentEvents != streamContentEvents {
		return "", fmt.Errorf("stream had %d content events, want %d", contentEvents, streamContentEvents)
	}
	if !terminated {
		return "", errors.New("stream did not end with its terminal event")
	}
	if usageChunks > 0 {
		warn = "client saw a usage-only chunk it did not ask for"
	}
	return warn, nil
}

// eachSSEData calls fn with every data line of an SSE stream, trimmed, in
// order, until fn returns an error.
func eachSSEData(stream []byte, fn func(data string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			if err := fn(strings.TrimSpace(data)); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
