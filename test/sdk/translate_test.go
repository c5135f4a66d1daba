package sdk_test

// Translation lane, part one: shared fixtures and helpers, and the
// Anthropic SDK calling gpt-test, whose upstream speaks Chat Completions.
// The OpenAI SDK calling claude-test is in translate_openai_test.go.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	oaioption "github.com/openai/openai-go/v3/option"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// pngBase64 is a 1×1 PNG.
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// eventGap paces every fake stream like a real network, so the gateway
// reads the events one at a time rather than in a single read.
const eventGap = time.Millisecond

// unicodeText is an answer whose bytes must survive translation unchanged.
const unicodeText = "Bonjour ! <b>&</b> ünïcödé ✓ 🌦"

// syntheticSignature is the form of a thinking signature the gateway makes
// for reasoning that came without one (TRANSLATION.md §1.8.4).
var syntheticSignature = regexp.MustCompile(`^tollgate\.v1\.[A-Za-z0-9_-]{32}$`)

func modeName(streaming bool) string {
	if streaming {
		return "stream"
	}
	return "whole"
}

// ---- OpenAI-compatible upstream payloads ----

const (
	oaiUpstreamID  = "chatcmpl-AZxQ7n3UqLtB2kS0sdkTrans"
	oaiCreated     = 1731592800
	oaiFingerprint = "fp_50cad350e4"
)

// oaiCompletion is a Chat Completions answer with one choice.
func oaiCompletion(message, finish, usage string) []byte {
	return []byte(`{"id":"` + oaiUpstreamID + `","object":"chat.completion","created":` + strconv.Itoa(oaiCreated) +
		`,"model":"` + openAIUpstreamModel + `","choices":[{"index":0,"message":` + message +
		`,"logprobs":null,"finish_reason":"` + finish + `"}],"usage":` + usage +
		`,"service_tier":"default","system_fingerprint":"` + oaiFingerprint + `"}`)
}

// oaiChunk is one streamed chunk of choice 0; finish "" is null.
func oaiChunk(delta, finish string) []byte {
	fr := "null"
	if finish != "" {
		fr = strconv.Quote(finish)
	}
	return []byte(`data: {"id":"` + oaiUpstreamID + `","object":"chat.completion.chunk","created":` + strconv.Itoa(oaiCreated) +
		`,"model":"` + openAIUpstreamModel + `","service_tier":"default","system_fingerprint":"` + oaiFingerprint +
		`","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + fr + `}],"usage":null}` + "\n\n")
}

// oaiUsageChunk is the trailing usage-only chunk of a stream that asked for usage.
func oaiUsageChunk(usage string) []byte {
	return []byte(`data: {"id":"` + oaiUpstreamID + `","object":"chat.completion.chunk","created":` + strconv.Itoa(oaiCreated) +
		`,"model":"` + openAIUpstreamModel + `","service_tier":"default","system_fingerprint":"` + oaiFingerprint +
		`","choices":[],"usage":` + usage + `}` + "\n\n")
}

var oaiDone = []byte("data: [DONE]\n\n")

// oaiUsage is an OpenAI usage object: prompt includes cached.
func oaiUsage(prompt, cached, completion int) string {
	return fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,`+
		`"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},`+
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`,
		prompt, completion, prompt+completion, cached)
}

// oaiError is an OpenAI error body.
func oaiError(message, typ, code string) []byte {
	c := "null"
	if code != "" {
		c = strconv.Quote(code)
	}
	return []byte(`{"error":{"message":` + strconv.Quote(message) + `,"type":` + strconv.Quote(typ) + `,"param":null,"code":` + c + `}}`)
}

// eventList lists events in the order they are sent.
func eventList(parts ...[]byte) [][]byte { return parts }

// ---- Anthropic upstream payloads ----

const antUpstreamID = "msg_01XFDUDYJgAACzvnptvVoYEL"

// antEvent frames an Anthropic stream event under its own type's name.
func antEvent(data string) []byte {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(data), &head); err != nil || head.Type == "" {
		panic(fmt.Sprintf("antEvent: not an event object: %v: %s", err, data))
	}
	return []byte("event: " + head.Type + "\ndata: " + data + "\n\n")
}

// antUsage is an Anthropic usage object: input excludes the cache.
func antUsage(input, cacheRead, output int) string {
	return fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":%d,`+
		`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":%d,"service_tier":"standard"}`,
		input, cacheRead, output)
}

// antMessage is a Messages answer.
func antMessage(content, stop, usage string) []byte {
	return []byte(`{"id":"` + antUpstreamID + `","type":"message","role":"assistant","model":"` + anthropicUpstreamModel +
		`","content":` + content + `,"stop_reason":"` + stop + `","stop_sequence":null,"usage":` + usage + `}`)
}

func antMessageStart(usage string) []byte {
	return antEvent(`{"type":"message_start","message":{"id":"` + antUpstreamID + `","type":"message","role":"assistant","model":"` +
		anthropicUpstreamModel + `","content":[],"stop_reason":null,"stop_sequence":null,"usage":` + usage + `}}`)
}

// antTextBlock is a whole streamed text block at index i.
func antTextBlock(i int, fragments ...string) [][]byte {
	idx := strconv.Itoa(i)
	out := [][]byte{antEvent(`{"type":"content_block_start","index":` + idx + `,"content_block":{"type":"text","text":""}}`)}
	for _, f := range fragments {
		out = append(out, antEvent(`{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"text_delta","text":`+jsonQuote(f)+`}}`))
	}
	return append(out, antEvent(`{"type":"content_block_stop","index":`+idx+`}`))
}

// antToolBlock is a whole streamed tool_use block at index i.
func antToolBlock(i int, id, name string, fragments ...string) [][]byte {
	idx := strconv.Itoa(i)
	out := [][]byte{antEvent(`{"type":"content_block_start","index":` + idx + `,"content_block":{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{}}}`)}
	for _, f := range fragments {
		out = append(out, antEvent(`{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"input_json_delta","partial_json":`+jsonQuote(f)+`}}`))
	}
	return append(out, antEvent(`{"type":"content_block_stop","index":`+idx+`}`))
}

func antMessageEnd(stop string, outputTokens int) [][]byte {
	return [][]byte{
		antEvent(`{"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":{"output_tokens":` + strconv.Itoa(outputTokens) + `}}`),
		antEvent(`{"type":"message_stop"}`),
	}
}

// antError is an Anthropic error body.
func antError(typ, message string) []byte {
	return []byte(`{"type":"error","error":{"type":"` + typ + `","message":` + jsonQuote(message) + `},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)
}

// events flattens event groups into one transcript.
func events(groups ...[][]byte) [][]byte {
	var out [][]byte
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func one(ev []byte) [][]byte { return [][]byte{ev} }

// jsonQuote encodes s as a JSON string without HTML escaping.
func jsonQuote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ---- what the upstreams received ----

// chatUpstreamBody is a translated Chat Completions request.
type chatUpstreamBody struct {
	Model               string           `json:"model"`
	Messages            []chatUpMessage  `json:"messages"`
	MaxCompletionTokens *int64           `json:"max_completion_tokens"`
	MaxTokens           *int64           `json:"max_tokens"`
	Temperature         *float64         `json:"temperature"`
	Stream              *bool            `json:"stream"`
	StreamOptions       *json.RawMessage `json:"stream_options"`
	Tools               []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	ReasoningEffort string          `json:"reasoning_effort"`
	raw             map[string]json.RawMessage
}

type chatUpMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// chatPart is a Chat Completions content part.
type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// parts reads a message's content, a string or an array of parts, as parts.
func (m chatUpMessage) parts(t *testing.T) []chatPart {
	t.Helper()
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return []chatPart{{Type: "text", Text: s}}
	}
	var ps []chatPart
	if err := json.Unmarshal(m.Content, &ps); err != nil {
		t.Fatalf("%s message content is neither a string nor parts: %v: %s", m.Role, err, m.Content)
	}
	return ps
}

// text is the concatenated text of a message's content.
func (m chatUpMessage) text(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, p := range m.parts(t) {
		if p.Type != "text" {
			t.Errorf("%s message: unexpected %q part where only text was expected: %s", m.Role, p.Type, m.Content)
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// openAIUpstreamRequest returns the one request the OpenAI-compatible
// upstream received and its decoded body, after checking that it went to
// Chat Completions with the gateway's own credential only.
func openAIUpstreamRequest(t *testing.T, up *upstreamtest.Server) (upstreamtest.Received, chatUpstreamBody) {
	t.Helper()
	rec := onlyRequest(t, up)
	if rec.Method != http.MethodPost || rec.Path != "/v1/chat/completions" {
		t.Errorf("upstream request: got %s %s, want POST /v1/chat/completions", rec.Method, rec.Path)
	}
	if got := rec.Header.Get("Authorization"); got != "Bearer "+upstreamKey {
		t.Errorf("upstream authorization: got %q, want %q", got, "Bearer "+upstreamKey)
	}
	for _, h := range []string{"X-Api-Key", "Anthropic-Version", "Anthropic-Beta"} {
		if got := rec.Header.Get(h); got != "" {
			t.Errorf("upstream header %s: got %q, want none on an OpenAI-compatible upstream", h, got)
		}
	}
	assertNoClientKey(t, rec)
	var body chatUpstreamBody
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatalf("upstream body is not a chat request: %v: %s", err, rec.Body)
	}
	body.raw = jsonMembers(t, rec.Body)
	if body.Model != openAIUpstreamModel {
		t.Errorf("upstream model: got %q, want %q", body.Model, openAIUpstreamModel)
	}
	return rec, body
}

// nonSystem returns the messages after the leading system messages.
func (b chatUpstreamBody) nonSystem() []chatUpMessage {
	i := 0
	for i < len(b.Messages) && (b.Messages[i].Role == "system" || b.Messages[i].Role == "developer") {
		i++
	}
	return b.Messages[i:]
}

// assertStreamRequested checks the stream flags of a translated request:
// a streaming call asks the upstream for a stream with usage.
func (b chatUpstreamBody) assertStreamRequested(t *testing.T, streaming bool) {
	t.Helper()
	gotStream := b.Stream != nil && *b.Stream
	if gotStream != streaming {
		t.Errorf("upstream stream: got %v, want %v", gotStream, streaming)
	}
	if !streaming {
		if b.StreamOptions != nil {
			t.Errorf("upstream stream_options on a non-streaming request: %s", *b.StreamOptions)
		}
		return
	}
	if b.StreamOptions == nil {
		t.Errorf("upstream stream_options: got none, want include_usage true (TRANSLATION.md §1.1)")
		return
	}
	assertSameJSON(t, "upstream stream_options", *b.StreamOptions, []byte(`{"include_usage":true}`))
}

// ---- the Anthropic SDK side ----

// messageStream is what an Anthropic SDK client saw of a stream.
type messageStream struct {
	msg    anthropic.Message
	events []anthropic.MessageStreamEventUnion
	err    error
}

func (s *messageStream) types() []string {
	out := make([]string, len(s.events))
	for i, ev := range s.events {
		out[i] = ev.Type
	}
	return out
}

func (s *messageStream) count(typ string) int {
	n := 0
	for _, ev := range s.events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// readMessageStream reads a whole stream, feeding every event to the
// SDK's accumulator, which must accept each one.
func readMessageStream(t *testing.T, client anthropic.Client, params anthropic.MessageNewParams, opts ...option.RequestOption) *messageStream {
	t.Helper()
	stream := client.Messages.NewStreaming(callContext(t), params, opts...)
	defer stream.Close()
	r := new(messageStream)
	for stream.Next() {
		ev := stream.Current()
		r.events = append(r.events, ev)
		if err := r.msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate rejected event %d (%s): %v\nevent: %s\nevents so far: %q", len(r.events), ev.Type, err, ev.RawJSON(), r.types())
		}
	}
	r.err = stream.Err()
	return r
}

// askAnthropic makes one call, streaming or not, and returns the
// message the client ends up with; a stream must end cleanly with
// message_stop. The stream is returned for further checks (nil when not
// streaming).
func askAnthropic(t *testing.T, client anthropic.Client, params anthropic.MessageNewParams, streaming bool, opts ...option.RequestOption) (anthropic.Message, *messageStream) {
	t.Helper()
	if !streaming {
		msg, err := client.Messages.New(callContext(t), params, opts...)
		if err != nil {
			t.Fatalf("Messages.New: %v", err)
		}
		return *msg, nil
	}
	s := readMessageStream(t, client, params, opts...)
	if s.err != nil {
		t.Fatalf("stream error after %q: %v", s.types(), s.err)
	}
	if n := len(s.events); n == 0 || s.events[n-1].Type != "message_stop" {
		t.Fatalf("stream did not end with message_stop: %q", s.types())
	}
	if n := s.count("message_delta"); n != 1 {
		t.Errorf("message_delta events: got %d, want exactly 1 (TRANSLATION.md §3.6)", n)
	}
	if s.events[0].Type != "message_start" {
		t.Errorf("first event: got %q, want message_start", s.events[0].Type)
	}
	return s.msg, s
}

// assertSequentialBlocks checks that blocks open and close one at a time,
// in index order, every delta going to the open block.
func assertSequentialBlocks(t *testing.T, s *messageStream) {
	t.Helper()
	open, next := -1, 0
	for i, ev := range s.events {
		switch ev.Type {
		case "content_block_start":
			if open >= 0 {
				t.Errorf("event %d: content_block_start(%d) while block %d is still open", i, ev.Index, open)
			}
			if int(ev.Index) != next {
				t.Errorf("event %d: content_block_start(%d), want index %d", i, ev.Index, next)
			}
			open, next = int(ev.Index), int(ev.Index)+1
		case "content_block_delta":
			if int(ev.Index) != open {
				t.Errorf("event %d: %s for block %d, but the open block is %d", i, ev.Delta.Type, ev.Index, open)
			}
		case "content_block_stop":
			if int(ev.Index) != open {
				t.Errorf("event %d: content_block_stop(%d), but the open block is %d", i, ev.Index, open)
			}
			open = -1
		}
	}
	if open >= 0 {
		t.Errorf("block %d never stopped", open)
	}
}

// startInput is the input object a content_block_start event announced.
func startInput(t *testing.T, ev anthropic.MessageStreamEventUnion) string {
	t.Helper()
	var raw struct {
		ContentBlock struct {
			Input json.RawMessage `json:"input"`
		} `json:"content_block"`
	}
	if err := json.Unmarshal([]byte(ev.RawJSON()), &raw); err != nil {
		t.Fatalf("content_block_start: %v: %s", err, ev.RawJSON())
	}
	return strings.Join(strings.Fields(string(raw.ContentBlock.Input)), "")
}

var weatherTool = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
	Name:        "get_weather",
	Description: anthropic.String("Get the current weather in a given location"),
	InputSchema: anthropic.ToolInputSchemaParam{
		Properties: map[string]any{
			"location": map[string]any{"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
			"unit":     map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
		},
		Required: []string{"location"},
	},
}}

func fileTools() []anthropic.ToolUnionParam {
	return []anthropic.ToolUnionParam{
		{OfTool: &anthropic.ToolParam{Name: "list_files", Description: anthropic.String("List the files in a directory"),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"path": map[string]any{"type": "string"}}, Required: []string{"path"}}}},
		{OfTool: &anthropic.ToolParam{Name: "search_files", Description: anthropic.String("Search file contents"),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"query": map[string]any{"type": "string"}}, Required: []string{"query"}}}},
	}
}

// ---- tests: Anthropic SDK → gpt-test (OpenAI-compatible upstream) ----

func TestTranslateAnthropicClientText(t *testing.T) {
	t.Parallel()
	// The stream's fragments: the second one carries <, >, & as \u escapes,
	// as some servers send them.
	fragments := []string{"Bonjour", " ! <b>&</b>", " ünïcödé", " ✓ 🌦"}
	wire := []string{`"Bonjour"`, `" ! \u003cb\u003e\u0026\u003c/b\u003e"`, `" ünïcödé"`, `" ✓ 🌦"`}
	if strings.Join(fragments, "") != unicodeText {
		t.Fatalf("fixture: fragments do not make up %q", unicodeText)
	}
	streamEvents := [][]byte{
		[]byte(": OPENROUTER PROCESSING\n\n"),
		oaiChunk(`{"role":"assistant","content":"","refusal":null}`, ""),
	}
	for _, w := range wire {
		streamEvents = append(streamEvents, oaiChunk(`{"content":`+w+`}`, ""))
	}
	streamEvents = append(streamEvents, oaiChunk(`{}`, "stop"), oaiUsageChunk(oaiUsage(31, 0, 12)), oaiDone)

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":`+jsonQuote(unicodeText)+`,"refusal":null,"annotations":[]}`, "stop", oaiUsage(31, 0, 12))}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: streamEvents}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			params := anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 512, Temperature: anthropic.Float(0.3),
				System:   []anthropic.TextBlockParam{{Text: "Be brief <always> & kind."}},
				Messages: userText("Say hello in French — <b>&</b>?"),
			}
			msg, s := askAnthropic(t, client, params, streaming, option.WithHeader("anthropic-beta", "interleaved-thinking-2025-05-14"))

			if len(msg.Content) != 1 || msg.Content[0].Type != "text" {
				t.Fatalf("content: got %s, want one text block", msg.RawJSON())
			}
			if got := msg.Content[0].Text; got != unicodeText {
				t.Errorf("text: got %q, want %q", got, unicodeText)
			}
			if msg.StopReason != anthropic.StopReasonEndTurn {
				t.Errorf("stop_reason: got %q, want end_turn", msg.StopReason)
			}
			if msg.Role != "assistant" || msg.Model != openAIUpstreamModel {
				t.Errorf("role/model: got %q/%q, want assistant/%s (the upstream model, as on the pass-through lane)", msg.Role, msg.Model, openAIUpstreamModel)
			}
			if !strings.HasPrefix(msg.ID, "msg_") || strings.Contains(msg.ID, "chatcmpl") {
				t.Errorf("id: got %q, want a msg_ id of the gateway's own (TRANSLATION.md §2.1)", msg.ID)
			}
			if u := msg.Usage; u.InputTokens != 31 || u.OutputTokens != 12 || u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 {
				t.Errorf("usage: got input %d output %d cache_read %d cache_creation %d, want 31 12 0 0",
					u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
			}
			if streaming {
				want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta",
					"content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
				if got := s.types(); !slices.Equal(got, want) {
					t.Errorf("event sequence:\n got %q\nwant %q", got, want)
				}
				var deltas []string
				for _, ev := range s.events {
					if ev.Type == "content_block_delta" {
						deltas = append(deltas, ev.Delta.Text)
					}
				}
				if !slices.Equal(deltas, fragments) {
					t.Errorf("text deltas: got %q, want the upstream's fragments %q", deltas, fragments)
				}
				// Clients that read the prompt size from message_start must not see 0 (B11, §3.2).
				if in := s.events[0].Message.Usage.InputTokens; in <= 0 {
					t.Errorf("message_start input_tokens: got %d, want a positive estimate", in)
				}
			}

			_, body := openAIUpstreamRequest(t, up)
			body.assertStreamRequested(t, streaming)
			if len(body.Messages) != 2 {
				t.Fatalf("upstream messages: got %d, want system + user: %s", len(body.Messages), body.raw["messages"])
			}
			if m := body.Messages[0]; m.Role != "system" || m.text(t) != "Be brief <always> & kind." {
				t.Errorf("upstream message 0: got role %q text %q, want the system prompt", m.Role, m.text(t))
			}
			if m := body.Messages[1]; m.Role != "user" || m.text(t) != "Say hello in French — <b>&</b>?" {
				t.Errorf("upstream message 1: got role %q text %q, want the user's question", m.Role, m.text(t))
			}
			if p := body.MaxCompletionTokens; p == nil || *p != 512 {
				t.Errorf("upstream max_completion_tokens: got %v, want 512: %s", p, body.raw["max_completion_tokens"])
			}
			if p := body.Temperature; p == nil || *p != 0.3 {
				t.Errorf("upstream temperature: got %v, want 0.3", p)
			}
			for _, k := range []string{"system", "max_tokens", "anthropic_version"} {
				if v, ok := body.raw[k]; ok {
					t.Errorf("upstream body has Anthropic member %s: %s", k, v)
				}
			}
		})
	}
}

func TestTranslateAnthropicClientToolCall(t *testing.T) {
	t.Parallel()
	const (
		callID   = "call_DdmO9pD3xa9XTPNJ32zg2hcA"
		wantArgs = `{"location":"Paris, France","unit":"celsius"}`
	)
	argFragments := []string{`{"`, `location`, `":"`, `Paris, France`, `","`, `unit`, `":"`, `celsius`, `"}`}
	streamEvents := [][]byte{oaiChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"`+callID+`","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null}`, "")}
	for _, f := range argFragments {
		streamEvents = append(streamEvents, oaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+jsonQuote(f)+`}}]}`, ""))
	}
	streamEvents = append(streamEvents, oaiChunk(`{}`, "tool_calls"), oaiUsageChunk(oaiUsage(82, 0, 18)), oaiDone)
	whole := oaiCompletion(`{"role":"assistant","content":null,"tool_calls":[{"id":"`+callID+`","type":"function","function":{"name":"get_weather","arguments":`+jsonQuote(wantArgs)+`}}],"refusal":null,"annotations":[]}`, "tool_calls", oaiUsage(82, 0, 18))

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: whole}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: streamEvents}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, unusedUpstream(t), up)
			var capture clientCapture
			client := anthropicClient(base, option.WithAPIKey(masterKey), option.WithMiddleware(capture.middleware))
			msg, s := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 1024, Messages: userText("What is the weather like in Paris?"),
				Tools:      []anthropic.ToolUnionParam{weatherTool},
				ToolChoice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}},
			}, streaming)

			if len(msg.Content) != 1 {
				t.Fatalf("content: got %d blocks, want exactly one tool_use (no empty text block): %s", len(msg.Content), msg.RawJSON())
			}
			b := msg.Content[0]
			if b.Type != "tool_use" || b.ID != callID || b.Name != "get_weather" {
				t.Errorf("block: got type %q id %q name %q, want tool_use %s get_weather", b.Type, b.ID, b.Name, callID)
			}
			assertSameJSON(t, "tool_use input", b.Input, []byte(wantArgs))
			if msg.StopReason != anthropic.StopReasonToolUse {
				t.Errorf("stop_reason: got %q, want tool_use", msg.StopReason)
			}
			if u := msg.Usage; u.InputTokens != 82 || u.OutputTokens != 18 {
				t.Errorf("usage: got input %d output %d, want 82 18", u.InputTokens, u.OutputTokens)
			}
			if streaming {
				var starts int
				for _, ev := range s.events {
					if ev.Type == "content_block_start" {
						starts++
						if got := startInput(t, ev); got != "{}" {
							t.Errorf("content_block_start tool_use input: got %s, want {} (arguments belong in input_json_delta, TRANSLATION.md §3.1)", got)
						}
					}
				}
				if starts != 1 {
					t.Errorf("content_block_start events: got %d, want 1", starts)
				}
				assertSequentialBlocks(t, s)
			}

			_, clientBody := capture.sent(t)
			_, body := openAIUpstreamRequest(t, up)
			body.assertStreamRequested(t, streaming)
			if len(body.Tools) != 1 {
				t.Fatalf("upstream tools: got %d, want 1: %s", len(body.Tools), body.raw["tools"])
			}
			tool := body.Tools[0]
			if tool.Type != "function" || tool.Function.Name != "get_weather" || tool.Function.Description != "Get the current weather in a given location" {
				t.Errorf("upstream tool: got type %q name %q description %q, want the client's get_weather function", tool.Type, tool.Function.Name, tool.Function.Description)
			}
			var sent struct {
				Tools []struct {
					InputSchema json.RawMessage `json:"input_schema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(clientBody, &sent); err != nil || len(sent.Tools) != 1 {
				t.Fatalf("client body tools: %v: %s", err, clientBody)
			}
			assertSameJSON(t, "upstream tool parameters (the client's input_schema)", tool.Function.Parameters, sent.Tools[0].InputSchema)
			assertSameJSON(t, "upstream tool_choice for {type:any}", body.ToolChoice, []byte(`"required"`))
		})
	}
}

func TestTranslateAnthropicClientParallelToolCalls(t *testing.T) {
	t.Parallel()
	// TRANSLATION.md §3.1: two calls whose argument fragments interleave, as
	// some OpenAI-compatible upstreams send them (verbatim, no ids or usage).
	interleaved := [][]byte{
		[]byte(`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"list_files","arguments":""}}]}}]}` + "\n\n"),
		[]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"search_files","arguments":""}}]}}]}` + "\n\n"),
		[]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\""}}]}}]}` + "\n\n"),
		[]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"query\""}}]}}]}` + "\n\n"),
		[]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\"src\"}"}}]}}]}` + "\n\n"),
		[]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":\"TODO\"}"}}]}}]}` + "\n\n"),
		[]byte(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n"),
		oaiDone,
	}
	whole := oaiCompletion(`{"role":"assistant","content":null,"tool_calls":[`+
		`{"id":"call_a","type":"function","function":{"name":"list_files","arguments":"{\"path\":\"src\"}"}},`+
		`{"id":"call_b","type":"function","function":{"name":"search_files","arguments":"{\"query\":\"TODO\"}"}}]}`,
		"tool_calls", oaiUsage(120, 0, 40))

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: whole}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: interleaved}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			msg, s := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 1024, Messages: userText("List src and find TODOs."), Tools: fileTools(),
			}, streaming)

			want := []struct{ id, name, input string }{
				{"call_a", "list_files", `{"path":"src"}`},
				{"call_b", "search_files", `{"query":"TODO"}`},
			}
			if len(msg.Content) != len(want) {
				t.Fatalf("content: got %d blocks, want %d tool_use blocks: %s", len(msg.Content), len(want), msg.RawJSON())
			}
			for i, w := range want {
				b := msg.Content[i]
				if b.Type != "tool_use" || b.ID != w.id || b.Name != w.name {
					t.Errorf("block %d: got type %q id %q name %q, want tool_use %s %s", i, b.Type, b.ID, b.Name, w.id, w.name)
				}
				assertSameJSON(t, fmt.Sprintf("block %d input", i), b.Input, []byte(w.input))
			}
			if msg.StopReason != anthropic.StopReasonToolUse {
				t.Errorf("stop_reason: got %q, want tool_use", msg.StopReason)
			}
			if streaming {
				assertSequentialBlocks(t, s) // T28: no delta for a stopped block, no start before the previous stop
				if n := s.count("content_block_start"); n != 2 {
					t.Errorf("content_block_start events: got %d, want 2", n)
				}
			}
			_, body := openAIUpstreamRequest(t, up)
			var names []string
			for _, tool := range body.Tools {
				names = append(names, tool.Function.Name)
			}
			if !slices.Equal(names, []string{"list_files", "search_files"}) {
				t.Errorf("upstream tools: got %q, want list_files, search_files", names)
			}
		})
	}
}

func TestTranslateAnthropicClientToolRoundTrip(t *testing.T) {
	t.Parallel()
	const (
		idParis = "toolu_01A09q90qw90lq917835lq9"
		idLyon  = "toolu_01B7Hq2nFzXk1mQ4pP3cR8vY"
		answer  = "Paris: 18°C and sunny. Lyon's station is offline."
	)
	history := []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("What's the weather in Paris and in Lyon?")),
		anthropic.NewAssistantMessage(
			anthropic.NewTextBlock("Let me check both."),
			anthropic.NewToolUseBlock(idParis, map[string]any{"location": "Paris", "unit": "celsius"}, "get_weather"),
			anthropic.NewToolUseBlock(idLyon, map[string]any{"location": "Lyon"}, "get_weather"),
		),
		anthropic.NewUserMessage(
			anthropic.NewToolResultBlock(idParis, "18°C, sunny <&>", false),
			anthropic.NewToolResultBlock(idLyon, "station offline", true),
		),
	}
	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":`+jsonQuote(answer)+`}`, "stop", oaiUsage(160, 0, 15))}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: eventList(
					oaiChunk(`{"role":"assistant","content":""}`, ""),
					oaiChunk(`{"content":`+jsonQuote(answer)+`}`, ""),
					oaiChunk(`{}`, "stop"), oaiUsageChunk(oaiUsage(160, 0, 15)), oaiDone)}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			msg, _ := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 1024, Messages: history, Tools: []anthropic.ToolUnionParam{weatherTool},
			}, streaming)
			if len(msg.Content) != 1 || msg.Content[0].Text != answer {
				t.Errorf("answer: got %s, want one text block %q", msg.RawJSON(), answer)
			}

			_, body := openAIUpstreamRequest(t, up)
			msgs := body.nonSystem()
			roles := make([]string, len(msgs))
			for i, m := range msgs {
				roles[i] = m.Role
			}
			if want := []string{"user", "assistant", "tool", "tool"}; !slices.Equal(roles, want) {
				t.Fatalf("upstream message roles: got %q, want %q: %s", roles, want, body.raw["messages"])
			}
			if got := msgs[0].text(t); got != "What's the weather in Paris and in Lyon?" {
				t.Errorf("upstream user message: got %q", got)
			}
			asst := msgs[1]
			if got := asst.text(t); got != "Let me check both." {
				t.Errorf("upstream assistant content: got %q, want %q", got, "Let me check both.")
			}
			wantCalls := []struct{ id, args string }{{idParis, `{"location":"Paris","unit":"celsius"}`}, {idLyon, `{"location":"Lyon"}`}}
			if len(asst.ToolCalls) != len(wantCalls) {
				t.Fatalf("upstream assistant tool_calls: got %d, want %d: %s", len(asst.ToolCalls), len(wantCalls), body.raw["messages"])
			}
			for i, w := range wantCalls {
				c := asst.ToolCalls[i]
				if c.ID != w.id || c.Type != "function" || c.Function.Name != "get_weather" {
					t.Errorf("upstream tool_calls[%d]: got id %q type %q name %q, want %s function get_weather", i, c.ID, c.Type, c.Function.Name, w.id)
				}
				assertSameJSON(t, fmt.Sprintf("upstream tool_calls[%d] arguments", i), []byte(c.Function.Arguments), []byte(w.args))
			}
			if m := msgs[2]; m.ToolCallID != idParis || m.text(t) != "18°C, sunny <&>" {
				t.Errorf("upstream tool message 1: got tool_call_id %q content %q, want %s %q", m.ToolCallID, m.text(t), idParis, "18°C, sunny <&>")
			}
			// is_error has no OpenAI field; the text says it (TRANSLATION.md §1.3).
			if m := msgs[3]; m.ToolCallID != idLyon || m.text(t) != "Error: station offline" {
				t.Errorf("upstream tool message 2: got tool_call_id %q content %q, want %s %q", m.ToolCallID, m.text(t), idLyon, "Error: station offline")
			}
		})
	}
}

func TestTranslateAnthropicClientReasoning(t *testing.T) {
	t.Parallel()
	const (
		reasoning = "The user asks for 6 × 7 <quickly> & exactly. 6 × 7 = 42 ✓"
		answer    = "It is 42 — <b>&</b>."
	)
	// DeepSeek style: reasoning_content fragments, then content, after an
	// opening chunk whose content is "".
	streamEvents := eventList(
		oaiChunk(`{"role":"assistant","content":""}`, ""),
		oaiChunk(`{"content":null,"reasoning_content":"The user asks for 6 × 7 "}`, ""),
		oaiChunk(`{"content":null,"reasoning_content":"<quickly> & exactly."}`, ""),
		oaiChunk(`{"content":null,"reasoning_content":" 6 × 7 = 42 ✓"}`, ""),
		oaiChunk(`{"content":"It is 42","reasoning_content":null}`, ""),
		oaiChunk(`{"content":" — <b>&</b>.","reasoning_content":null}`, ""),
		oaiChunk(`{"content":""}`, "stop"),
		oaiUsageChunk(oaiUsage(40, 0, 64)),
		oaiDone,
	)
	whole := oaiCompletion(`{"role":"assistant","content":`+jsonQuote(answer)+`,"reasoning_content":`+jsonQuote(reasoning)+`}`, "stop", oaiUsage(40, 0, 64))

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: whole}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: streamEvents}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			msg, s := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 4096, Messages: userText("What is 6 × 7?"),
				Thinking: anthropic.ThinkingConfigParamOfEnabled(2048),
			}, streaming)

			if len(msg.Content) != 2 {
				t.Fatalf("content: got %d blocks, want thinking then text: %s", len(msg.Content), msg.RawJSON())
			}
			th, tx := msg.Content[0], msg.Content[1]
			if th.Type != "thinking" || th.Thinking != reasoning {
				t.Errorf("block 0: got type %q thinking %q, want thinking %q", th.Type, th.Thinking, reasoning)
			}
			if !syntheticSignature.MatchString(th.Signature) {
				t.Errorf("thinking signature: got %q, want tollgate.v1. and 32 base64url characters (TRANSLATION.md §1.8.4)", th.Signature)
			}
			if tx.Type != "text" || tx.Text != answer {
				t.Errorf("block 1: got type %q text %q, want text %q", tx.Type, tx.Text, answer)
			}
			if msg.StopReason != anthropic.StopReasonEndTurn {
				t.Errorf("stop_reason: got %q, want end_turn", msg.StopReason)
			}
			if streaming {
				assertSequentialBlocks(t, s)
				// One signature_delta, immediately before content_block_stop(0) (T31).
				var sigAt, stop0At = -1, -1
				sigs := 0
				for i, ev := range s.events {
					if ev.Type == "content_block_delta" && ev.Delta.Type == "signature_delta" {
						sigs++
						sigAt = i
					}
					if ev.Type == "content_block_stop" && ev.Index == 0 && stop0At < 0 {
						stop0At = i
					}
				}
				if sigs != 1 || sigAt < 0 || stop0At != sigAt+1 {
					t.Errorf("signature_delta: got %d, last at event %d with content_block_stop(0) at %d, want one right before the stop: %q", sigs, sigAt, stop0At, s.types())
				}
			}
			_, body := openAIUpstreamRequest(t, up)
			// budget_tokens 2048 ≤ 8192 → medium (TRANSLATION.md §1.8.2).
			if body.ReasoningEffort != "medium" {
				t.Errorf("upstream reasoning_effort: got %q, want medium for budget_tokens 2048", body.ReasoningEffort)
			}
			if v, ok := body.raw["thinking"]; ok {
				t.Errorf("upstream body has Anthropic thinking member: %s", v)
			}
		})
	}
}

func TestTranslateAnthropicClientImage(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":"A single red pixel."}`, "stop", oaiUsage(95, 0, 6))}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: eventList(
					oaiChunk(`{"role":"assistant","content":""}`, ""),
					oaiChunk(`{"content":"A single red pixel."}`, ""),
					oaiChunk(`{}`, "stop"), oaiUsageChunk(oaiUsage(95, 0, 6)), oaiDone)}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			msg, _ := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 256, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(
					anthropic.NewImageBlockBase64("image/png", pngBase64),
					anthropic.NewTextBlock("What colour is this pixel?"),
				)},
			}, streaming)
			if len(msg.Content) != 1 || msg.Content[0].Text != "A single red pixel." {
				t.Errorf("answer: got %s, want the upstream's text", msg.RawJSON())
			}

			_, body := openAIUpstreamRequest(t, up)
			msgs := body.nonSystem()
			if len(msgs) != 1 || msgs[0].Role != "user" {
				t.Fatalf("upstream messages: got %s, want one user message", body.raw["messages"])
			}
			parts := msgs[0].parts(t)
			if len(parts) != 2 {
				t.Fatalf("upstream user content: got %d parts, want image then text: %s", len(parts), msgs[0].Content)
			}
			if p := parts[0]; p.Type != "image_url" || p.ImageURL == nil || p.ImageURL.URL != "data:image/png;base64,"+pngBase64 {
				t.Errorf("upstream part 0: got %s, want image_url with the data URL of the client's PNG", msgs[0].Content)
			}
			if p := parts[1]; p.Type != "text" || p.Text != "What colour is this pixel?" {
				t.Errorf("upstream part 1: got type %q text %q, want the client's text", p.Type, p.Text)
			}
		})
	}
}

func TestTranslateAnthropicClientCacheUsage(t *testing.T) {
	t.Parallel()
	// OpenAI prompt_tokens include the cached ones; Anthropic input_tokens
	// do not (TRANSLATION.md §2.4, T20).
	usage := oaiUsage(1000, 800, 50)
	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":"Cached answer."}`, "stop", usage)}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: eventList(
					oaiChunk(`{"role":"assistant","content":""}`, ""),
					oaiChunk(`{"content":"Cached "}`, ""),
					oaiChunk(`{"content":"answer."}`, ""),
					oaiChunk(`{}`, "stop"), oaiUsageChunk(usage), oaiDone)}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			msg, s := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 256, Messages: userText("Same long prompt as before."),
			}, streaming)
			if u := msg.Usage; u.InputTokens != 200 || u.CacheReadInputTokens != 800 || u.CacheCreationInputTokens != 0 || u.OutputTokens != 50 {
				t.Errorf("usage: got input %d cache_read %d cache_creation %d output %d, want 200 800 0 50",
					u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
			}
			if len(msg.Content) != 1 || msg.Content[0].Text != "Cached answer." {
				t.Errorf("answer: got %s, want %q", msg.RawJSON(), "Cached answer.")
			}
			openAIUpstreamRequest(t, up)
			if streaming {
				// The exact counts arrive once, in the single message_delta.
				for _, ev := range s.events {
					if ev.Type != "message_delta" {
						continue
					}
					if u := ev.Usage; u.InputTokens != 200 || u.CacheReadInputTokens != 800 || u.OutputTokens != 50 {
						t.Errorf("message_delta usage: got input %d cache_read %d output %d, want 200 800 50 (%s)", u.InputTokens, u.CacheReadInputTokens, u.OutputTokens, ev.RawJSON())
					}
				}
			}
		})
	}
}

func TestTranslateAnthropicClientUpstreamErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		reply      upstreamtest.Reply
		status     int
		typ        string
		message    string // part of the upstream's message the client must see
		hidden     string // part of the upstream's message the client must not see
		retryAfter string
		noRetry    bool // the answer must carry x-should-retry: false
	}{
		{name: "429 rate limited",
			reply: upstreamtest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"7"}},
				Body: oaiError("Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1.", "requests", "rate_limit_exceeded")},
			status: http.StatusTooManyRequests, typ: "rate_limit_error", message: "Rate limit reached for gpt-4o", retryAfter: "7"},
		{name: "500 server error",
			reply:  upstreamtest.Reply{Status: http.StatusInternalServerError, Body: oaiError("The server had an error while processing your request. Sorry about that!", "server_error", "")},
			status: http.StatusInternalServerError, typ: "api_error", message: "The server had an error"},
		{name: "503 overloaded",
			reply:  upstreamtest.Reply{Status: http.StatusServiceUnavailable, Body: oaiError("The engine is currently overloaded, please try again later", "server_error", "")},
			status: 529, typ: "overloaded_error", message: "currently overloaded"},
		// The upstream credential is the gateway's: not a 401 for the client
		// (§4.4), and the upstream's text, which quotes part of that
		// credential, stays in the gateway's log.
		{name: "401 upstream key rejected",
			reply:  upstreamtest.Reply{Status: http.StatusUnauthorized, Body: oaiError("Incorrect API key provided: upstream-*cret.", "invalid_request_error", "invalid_api_key")},
			status: http.StatusBadGateway, typ: "api_error", message: "could not authenticate to the upstream provider", hidden: "cret", noRetry: true},
		{name: "402 upstream billing",
			reply:  upstreamtest.Reply{Status: http.StatusPaymentRequired, Body: oaiError("Your account org-secret123 is not active.", "billing_error", "")},
			status: http.StatusBadGateway, typ: "api_error", message: "rejected the gateway's credential", hidden: "org-secret123", noRetry: true},
		// Context overflow in Anthropic's words, which agents key compaction on (§4.3).
		{name: "400 context length exceeded",
			reply:  upstreamtest.Reply{Status: http.StatusBadRequest, Body: oaiError("This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.", "invalid_request_error", "context_length_exceeded")},
			status: http.StatusBadRequest, typ: "invalid_request_error", message: "prompt is too long: 130532 tokens > 128000 maximum"},
	} {
		for _, streaming := range []bool{false, true} {
			t.Run(tc.name+" "+modeName(streaming), func(t *testing.T) {
				t.Parallel()
				up := staticUpstream(t, tc.reply)
				base := startGateway(t, unusedUpstream(t), up)
				client := anthropicClient(base)
				params := anthropic.MessageNewParams{Model: "gpt-test", MaxTokens: 64, Messages: userText("hi")}
				var err error
				if streaming {
					s := readMessageStream(t, client, params)
					if len(s.events) != 0 {
						t.Errorf("got events %q before the error, want a plain HTTP error (TRANSLATION.md P4)", s.types())
					}
					err = s.err
				} else {
					var msg *anthropic.Message
					msg, err = client.Messages.New(callContext(t), params)
					if err == nil {
						t.Fatalf("got message %s, want an error", msg.RawJSON())
					}
				}
				apiErr := anthropicError(t, err, tc.status, tc.typ)
				if !strings.Contains(apiErr.RawJSON(), tc.message) {
					t.Errorf("error body: got %s, want the upstream's message %q", apiErr.RawJSON(), tc.message)
				}
				if tc.hidden != "" && strings.Contains(apiErr.RawJSON(), tc.hidden) {
					t.Errorf("error body: got %s, which relays the upstream's %q", apiErr.RawJSON(), tc.hidden)
				}
				if got := apiErr.Response.Header.Get("Retry-After"); got != tc.retryAfter {
					t.Errorf("retry-after header: got %q, want %q", got, tc.retryAfter)
				}
				if got := apiErr.Response.Header.Get("X-Should-Retry"); tc.noRetry && got != "false" {
					t.Errorf("x-should-retry header: got %q, want false", got)
				}
				openAIUpstreamRequest(t, up) // exactly one: no retry behind the client's back
			})
		}
	}
}

func TestTranslateAnthropicClientStreamFailure(t *testing.T) {
	t.Parallel()
	opening := eventList(
		oaiChunk(`{"role":"assistant","content":""}`, ""),
		oaiChunk(`{"content":"Partial"}`, ""),
		oaiChunk(`{"content":" answer"}`, ""),
	)
	for _, tc := range []struct {
		name  string
		reply upstreamtest.Reply
	}{
		{"connection cut", upstreamtest.Reply{Events: opening, Cut: true, Gap: eventGap}},
		{"body ends without finish_reason or [DONE]", upstreamtest.Reply{Gap: eventGap, Events: opening}},
		{"error chunk", upstreamtest.Reply{Gap: eventGap, Events: append(slices.Clone(opening),
			[]byte("data: "+string(oaiError("The server had an error while processing your request. Sorry about that!", "server_error", ""))+"\n\n"))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := staticUpstream(t, tc.reply)
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			s := readMessageStream(t, client, anthropic.MessageNewParams{Model: "gpt-test", MaxTokens: 256, Messages: userText("Tell me a story.")})
			if s.err == nil {
				t.Fatalf("stream ended cleanly after %q, want an error (TRANSLATION.md P1)", s.types())
			}
			var apiErr *anthropic.Error
			if errors.As(s.err, &apiErr) && apiErr.Type() != "api_error" {
				t.Errorf("stream error type: got %q, want api_error (%v)", apiErr.Type(), s.err)
			}
			for _, typ := range []string{"message_delta", "message_stop"} {
				if n := s.count(typ); n != 0 {
					t.Errorf("got %d %s events from an interrupted stream, want none: %q", n, typ, s.types())
				}
			}
			if s.msg.StopReason != "" {
				t.Errorf("stop_reason: got %q from an interrupted stream, want none", s.msg.StopReason)
			}
			if len(s.msg.Content) != 1 || s.msg.Content[0].Text != "Partial answer" {
				t.Errorf("content before the failure: got %s, want one text block %q", s.msg.RawJSON(), "Partial answer")
			}
			openAIUpstreamRequest(t, up)
		})
	}
}

func TestTranslateAnthropicClientDroppedParams(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":"ok"}`, "stop", oaiUsage(9, 0, 1))}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: eventList(
					oaiChunk(`{"role":"assistant","content":""}`, ""), oaiChunk(`{"content":"ok"}`, ""),
					oaiChunk(`{}`, "stop"), oaiUsageChunk(oaiUsage(9, 0, 1)), oaiDone)}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			var httpResp *http.Response
			// top_k and cache breakpoints are advisory; an OpenAI upstream has neither.
			msg, _ := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 64, Messages: userText("hi"), TopK: anthropic.Int(40),
				System: []anthropic.TextBlockParam{{Text: "A long, cached system prompt.", CacheControl: anthropic.NewCacheControlEphemeralParam()}},
			}, streaming, option.WithResponseInto(&httpResp))
			if len(msg.Content) != 1 || msg.Content[0].Text != "ok" {
				t.Errorf("answer: got %s, want ok", msg.RawJSON())
			}
			if httpResp == nil {
				t.Fatalf("no HTTP response captured")
			}
			dropped := strings.Split(httpResp.Header.Get("Tollgate-Dropped-Params"), ",")
			for _, p := range []string{"top_k", "cache_control"} {
				if !slices.Contains(dropped, p) {
					t.Errorf("tollgate-dropped-params: got %q, want it to list %s", httpResp.Header.Get("Tollgate-Dropped-Params"), p)
				}
			}
			rec, body := openAIUpstreamRequest(t, up)
			if v, ok := body.raw["top_k"]; ok {
				t.Errorf("upstream top_k: got %s, want it dropped", v)
			}
			if strings.Contains(string(rec.Body), "cache_control") {
				t.Errorf("upstream body carries cache_control: %s", rec.Body)
			}
			if len(body.Messages) == 0 || body.Messages[0].Role != "system" || body.Messages[0].text(t) != "A long, cached system prompt." {
				t.Errorf("upstream system message: got %s, want the system prompt without its breakpoint", body.raw["messages"])
			}
		})
	}
}

func TestTranslateAnthropicClientStreamQuirks(t *testing.T) {
	t.Parallel()
	type block struct{ typ, text, id, name, input string }
	for _, tc := range []struct {
		name   string
		events [][]byte
		want   []block
		stop   anthropic.StopReason
		usage  [3]int64 // input, cache_read, output
	}{
		{
			// T29: id and type repeated on every fragment of one call.
			name: "id repeated on every fragment",
			events: eventList(
				oaiChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"list_files","arguments":""}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"arguments":"{\"path\":"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"arguments":"\"src\"}"}}]}`, ""),
				oaiChunk(`{}`, "tool_calls"), oaiUsageChunk(oaiUsage(50, 0, 9)), oaiDone),
			want:  []block{{typ: "tool_use", id: "call_a", name: "list_files", input: `{"path":"src"}`}},
			stop:  anthropic.StopReasonToolUse,
			usage: [3]int64{50, 0, 9},
		},
		{
			// T30 and T39: text then a call whose last fragment shares a chunk
			// with finish_reason "stop"; the usage chunk repeats finish_reason.
			name: "last fragment with finish, finish repeated",
			events: eventList(
				oaiChunk(`{"role":"assistant","content":""}`, ""),
				oaiChunk(`{"content":"Let me look."}`, ""),
				oaiChunk(`{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"search_files","arguments":"{\"query\":"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"TODO\"}"}}]}`, "stop"),
				[]byte(`data: {"id":"`+oaiUpstreamID+`","object":"chat.completion.chunk","created":`+strconv.Itoa(oaiCreated)+`,"model":"`+openAIUpstreamModel+`","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":`+oaiUsage(70, 0, 21)+`}`+"\n\n"),
				oaiDone),
			want:  []block{{typ: "text", text: "Let me look."}, {typ: "tool_use", id: "call_x", name: "search_files", input: `{"query":"TODO"}`}},
			stop:  anthropic.StopReasonToolUse,
			usage: [3]int64{70, 0, 21},
		},
		{
			// T27: cached_tokens above prompt_tokens (openai-go's fixture) clamps at 0.
			name: "cached above prompt",
			events: eventList(
				oaiChunk(`{"role":"assistant","content":""}`, ""),
				oaiChunk(`{"content":"Hi."}`, ""),
				oaiChunk(`{}`, "stop"), oaiUsageChunk(oaiUsage(10, 20, 100)), oaiDone),
			want:  []block{{typ: "text", text: "Hi."}},
			stop:  anthropic.StopReasonEndTurn,
			usage: [3]int64{0, 20, 100},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := staticUpstream(t, upstreamtest.Reply{Gap: eventGap, Events: tc.events})
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			msg, s := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 1024, Messages: userText("Go."), Tools: fileTools(),
			}, true)
			assertSequentialBlocks(t, s)
			if len(msg.Content) != len(tc.want) {
				t.Fatalf("content: got %d blocks, want %d: %s (events %q)", len(msg.Content), len(tc.want), msg.RawJSON(), s.types())
			}
			for i, w := range tc.want {
				b := msg.Content[i]
				if b.Type != w.typ || b.Text != w.text || b.ID != w.id || b.Name != w.name {
					t.Errorf("block %d: got type %q text %q id %q name %q, want %+v", i, b.Type, b.Text, b.ID, b.Name, w)
				}
				if w.input != "" {
					assertSameJSON(t, fmt.Sprintf("block %d input", i), b.Input, []byte(w.input))
				}
			}
			if msg.StopReason != tc.stop {
				t.Errorf("stop_reason: got %q, want %q", msg.StopReason, tc.stop)
			}
			if u := msg.Usage; [3]int64{u.InputTokens, u.CacheReadInputTokens, u.OutputTokens} != tc.usage {
				t.Errorf("usage: got input %d cache_read %d output %d, want %v", u.InputTokens, u.CacheReadInputTokens, u.OutputTokens, tc.usage)
			}
			openAIUpstreamRequest(t, up)
		})
	}
}

func TestTranslateAnthropicClientLongToolName(t *testing.T) {
	t.Parallel()
	// Valid for Anthropic, too long for OpenAI's ^[a-zA-Z0-9_-]{1,64}$ (T19).
	const long = "mcp__filesystem_server__read_text_file_with_line_numbers_and_encoding_detection"
	if len(long) <= 64 {
		t.Fatalf("fixture: name has %d characters, want more than 64", len(long))
	}
	validOpenAIName := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			// The model calls the tool by the name it was given.
			up := newUpstream(t, func(rec upstreamtest.Received) upstreamtest.Reply {
				var req chatUpstreamBody
				name := "no-tools-received"
				if json.Unmarshal(rec.Body, &req) == nil && len(req.Tools) > 0 {
					name = req.Tools[0].Function.Name
				}
				if !streaming {
					return upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_long1","type":"function","function":{"name":`+jsonQuote(name)+`,"arguments":"{\"path\":\"README.md\"}"}}]}`, "tool_calls", oaiUsage(60, 0, 12))}
				}
				return upstreamtest.Reply{Gap: eventGap, Events: eventList(
					oaiChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_long1","type":"function","function":{"name":`+jsonQuote(name)+`,"arguments":""}}]}`, ""),
					oaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"README.md\"}"}}]}`, ""),
					oaiChunk(`{}`, "tool_calls"), oaiUsageChunk(oaiUsage(60, 0, 12)), oaiDone)}
			})
			base := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(base)
			msg, _ := askAnthropic(t, client, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 512, Messages: userText("Read the README."),
				Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: long,
					InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"path": map[string]any{"type": "string"}}}}}},
			}, streaming)

			_, body := openAIUpstreamRequest(t, up)
			if len(body.Tools) != 1 {
				t.Fatalf("upstream tools: got %s, want one", body.raw["tools"])
			}
			if n := body.Tools[0].Function.Name; !validOpenAIName.MatchString(n) {
				t.Errorf("upstream tool name: got %q (%d characters), want one OpenAI accepts", n, len(n))
			}
			if len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" {
				t.Fatalf("content: got %s, want one tool_use", msg.RawJSON())
			}
			if got := msg.Content[0].Name; got != long {
				t.Errorf("tool_use name: got %q, want the client's own %q", got, long)
			}
			assertSameJSON(t, "tool_use input", msg.Content[0].Input, []byte(`{"path":"README.md"}`))
		})
	}
}

func TestTranslateStreamErrorFirstEvent(t *testing.T) {
	t.Parallel()
	// An error as the upstream's first event is answered as a plain HTTP
	// error in the client's protocol, not as a stream (TRANSLATION.md P4).
	t.Run("anthropic client", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Gap: eventGap, Events: eventList(
			[]byte("data: " + string(oaiError("Rate limit reached for gpt-4o on tokens per min (TPM).", "tokens", "rate_limit_exceeded")) + "\n\n"))})
		base := startGateway(t, unusedUpstream(t), up)
		s := readMessageStream(t, anthropicClient(base), anthropic.MessageNewParams{Model: "gpt-test", MaxTokens: 64, Messages: userText("hi")})
		if len(s.events) != 0 {
			t.Errorf("got events %q, want none before the error", s.types())
		}
		apiErr := anthropicError(t, s.err, http.StatusTooManyRequests, "rate_limit_error")
		if !strings.Contains(apiErr.RawJSON(), "Rate limit reached") {
			t.Errorf("error body: got %s, want the upstream's message", apiErr.RawJSON())
		}
		openAIUpstreamRequest(t, up)
	})
	t.Run("openai client", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Gap: eventGap, Events: eventList(
			antEvent(`{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`))})
		base := startGateway(t, up, unusedUpstream(t))
		r := readChatStream(t, openAIClient(base), openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("hi")})
		if r.chunks != 0 {
			t.Errorf("got %d chunks, want none before the error", r.chunks)
		}
		apiErr := openAIError(t, r.err, http.StatusServiceUnavailable)
		if apiErr.Type != "service_unavailable_error" || apiErr.Code != "server_is_overloaded" {
			t.Errorf("error type/code: got %q/%q, want service_unavailable_error/server_is_overloaded", apiErr.Type, apiErr.Code)
		}
		anthropicUpstreamRequest(t, up)
	})
}

func TestTranslateRequestIDs(t *testing.T) {
	t.Parallel()
	// Clients get tollgate's id under their protocol's header, and the
	// upstream's id under tollgate-upstream-request-id (TRANSLATION.md §4.1).
	const (
		antReqID = "req_011CSHoEeqs5C35K2UUqR7Fy"
		oaiReqID = "req_7c1e0b2f9a3d4e5f8a6b"
	)
	for _, tc := range []struct {
		name   string
		client string // "anthropic" or "openai"
		fail   bool   // the upstream answers an error
	}{
		{"anthropic client answer", "anthropic", false},
		{"anthropic client error", "anthropic", true},
		{"openai client answer", "openai", false},
		{"openai client error", "openai", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var resp *http.Response
			var clientHeader, upstreamID string
			if tc.client == "anthropic" {
				clientHeader, upstreamID = "Request-Id", oaiReqID
				rep := upstreamtest.Reply{Header: http.Header{"X-Request-Id": {oaiReqID}},
					Body: oaiCompletion(`{"role":"assistant","content":"ok"}`, "stop", oaiUsage(9, 0, 1))}
				if tc.fail {
					rep.Status, rep.Body = http.StatusInternalServerError, oaiError("The server had an error while processing your request.", "server_error", "")
				}
				up := staticUpstream(t, rep)
				base := startGateway(t, unusedUpstream(t), up)
				client := anthropicClient(base)
				_, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{Model: "gpt-test", MaxTokens: 64, Messages: userText("hi")},
					option.WithResponseInto(&resp))
				var apiErr *anthropic.Error
				if errors.As(err, &apiErr) {
					resp = apiErr.Response
				} else if err != nil {
					t.Fatalf("Messages.New: %v", err)
				}
			} else {
				clientHeader, upstreamID = "X-Request-Id", antReqID
				rep := upstreamtest.Reply{Header: http.Header{"Request-Id": {antReqID}},
					Body: antMessage(`[{"type":"text","text":"ok"}]`, "end_turn", antUsage(9, 0, 1))}
				if tc.fail {
					rep.Status, rep.Body = http.StatusInternalServerError, antError("api_error", "Internal server error")
				}
				up := staticUpstream(t, rep)
				base := startGateway(t, up, unusedUpstream(t))
				client := openAIClient(base)
				_, err := client.Chat.Completions.New(callContext(t), openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("hi")},
					oaioption.WithResponseInto(&resp))
				var apiErr *openai.Error
				if errors.As(err, &apiErr) {
					resp = apiErr.Response
				} else if err != nil {
					t.Fatalf("Chat.Completions.New: %v", err)
				}
			}
			if resp == nil {
				t.Fatalf("no HTTP response captured")
			}
			if (resp.StatusCode >= 400) != tc.fail {
				t.Fatalf("status: got %d, want failure %v", resp.StatusCode, tc.fail)
			}
			own := resp.Header.Get("Tollgate-Request-Id")
			if own == "" {
				t.Fatalf("tollgate-request-id: got none")
			}
			if got := resp.Header.Get("Tollgate-Upstream-Request-Id"); got != upstreamID {
				t.Errorf("tollgate-upstream-request-id: got %q, want the upstream's %q", got, upstreamID)
			}
			t.Run("client protocol header", func(t *testing.T) {
				if got := resp.Header.Get(clientHeader); got != own {
					t.Errorf("%s: got %q, want tollgate's id %q", clientHeader, got, own)
				}
			})
		})
	}
}

func TestTranslateAnthropicClientRequestShapes(t *testing.T) {
	t.Parallel()
	withTools := func(p anthropic.MessageNewParams) anthropic.MessageNewParams {
		p.Tools = []anthropic.ToolUnionParam{weatherTool}
		return p
	}
	base := anthropic.MessageNewParams{Model: "gpt-test", MaxTokens: 256, Messages: userText("Weather in Paris?")}
	for _, tc := range []struct {
		name    string
		params  anthropic.MessageNewParams
		check   func(t *testing.T, body chatUpstreamBody)
		dropped []string // expected in tollgate-dropped-params
	}{
		{name: "tool_choice any without parallel calls (T15)",
			params: func() anthropic.MessageNewParams {
				p := withTools(base)
				p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: anthropic.Bool(true)}}
				return p
			}(),
			check: func(t *testing.T, body chatUpstreamBody) {
				assertSameJSON(t, "tool_choice", body.ToolChoice, []byte(`"required"`))
				assertSameJSON(t, "parallel_tool_calls", body.raw["parallel_tool_calls"], []byte(`false`))
			}},
		{name: "tool_choice naming a tool (T15)",
			params: func() anthropic.MessageNewParams {
				p := withTools(base)
				p.ToolChoice = anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "get_weather"}}
				return p
			}(),
			check: func(t *testing.T, body chatUpstreamBody) {
				assertSameJSON(t, "tool_choice", body.ToolChoice, []byte(`{"type":"function","function":{"name":"get_weather"}}`))
			}},
		{name: "stop sequences and user id",
			params: func() anthropic.MessageNewParams {
				p := base
				p.StopSequences = []string{"END", "\n\nHuman:"}
				p.Metadata = anthropic.MetadataParam{UserID: anthropic.String("user-7f3a9c")}
				return p
			}(),
			check: func(t *testing.T, body chatUpstreamBody) {
				assertSameJSON(t, "stop", body.raw["stop"], []byte(`["END","\n\nHuman:"]`))
				assertSameJSON(t, "user", body.raw["user"], []byte(`"user-7f3a9c"`))
			}},
		{name: "system blocks (T13)",
			params: func() anthropic.MessageNewParams {
				p := base
				p.System = []anthropic.TextBlockParam{{Text: "You are terse.", CacheControl: anthropic.NewCacheControlEphemeralParam()}, {Text: " Answer in French."}}
				return p
			}(),
			check: func(t *testing.T, body chatUpstreamBody) {
				if len(body.Messages) == 0 || body.Messages[0].Role != "system" {
					t.Fatalf("messages: got %s, want a system message first", body.raw["messages"])
				}
				if got := body.Messages[0].text(t); got != "You are terse.\n\n Answer in French." && got != "You are terse. Answer in French." {
					t.Errorf("system text: got %q, want both blocks in order", got)
				}
				if len(body.nonSystem()) != 1 {
					t.Errorf("messages after the system prompt: got %d, want 1", len(body.nonSystem()))
				}
			},
			dropped: []string{"cache_control"}},
		{name: "image inside a tool result (T14)",
			params: anthropic.MessageNewParams{Model: "gpt-test", MaxTokens: 256, Tools: []anthropic.ToolUnionParam{weatherTool},
				Messages: []anthropic.MessageParam{
					anthropic.NewUserMessage(anthropic.NewTextBlock("Show me the radar.")),
					anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_1", map[string]any{"location": "Paris"}, "get_weather")),
					anthropic.NewUserMessage(
						anthropic.ContentBlockParamUnion{OfToolResult: &anthropic.ToolResultBlockParam{
							ToolUseID: "toolu_1", IsError: anthropic.Bool(true),
							Content: []anthropic.ToolResultBlockParamContentUnion{
								{OfText: &anthropic.TextBlockParam{Text: "ok"}},
								{OfImage: anthropic.NewImageBlockBase64("image/png", pngBase64).OfImage},
							},
						}},
						anthropic.NewTextBlock("next"),
					),
				}},
			check: func(t *testing.T, body chatUpstreamBody) {
				msgs := body.nonSystem()
				var tool *chatUpMessage
				var images []string
				var texts []string
				for i := range msgs {
					m := msgs[i]
					if m.Role == "tool" {
						tool = &msgs[i]
						continue
					}
					if m.Role != "user" || i < 2 {
						continue
					}
					for _, p := range m.parts(t) {
						if p.Type == "image_url" && p.ImageURL != nil {
							images = append(images, p.ImageURL.URL)
						}
						if p.Type == "text" {
							texts = append(texts, p.Text)
						}
					}
				}
				if tool == nil {
					t.Fatalf("messages: got %s, want a tool message", body.raw["messages"])
				}
				if tool.ToolCallID != "toolu_1" {
					t.Errorf("tool_call_id: got %q, want toolu_1", tool.ToolCallID)
				}
				if c := string(tool.Content); strings.Contains(c, pngBase64[:16]) || !strings.HasPrefix(tool.text(t), "Error: ok") {
					t.Errorf("tool message content: got %s, want text starting \"Error: ok\" and no image bytes", c)
				}
				if !slices.Equal(images, []string{"data:image/png;base64," + pngBase64}) {
					t.Errorf("images after the tool message: got %d (%.40q), want the tool result's PNG once as a user image_url", len(images), images)
				}
				if !slices.Contains(texts, "next") {
					t.Errorf("user text after the tool result: got %q, want \"next\"", texts)
				}
			}},
		{name: "thinking budget 16000 (T18)",
			params: func() anthropic.MessageNewParams {
				p := base
				p.MaxTokens = 20000
				p.Thinking = anthropic.ThinkingConfigParamOfEnabled(16000)
				return p
			}(),
			check: func(t *testing.T, body chatUpstreamBody) {
				if body.ReasoningEffort != "high" {
					t.Errorf("reasoning_effort: got %q, want high for budget_tokens 16000 (8192 < b ≤ 24576)", body.ReasoningEffort)
				}
			}},
		{name: "thinking budget 1024 (T18)",
			params: func() anthropic.MessageNewParams {
				p := base
				p.MaxTokens = 4096
				p.Thinking = anthropic.ThinkingConfigParamOfEnabled(1024)
				return p
			}(),
			check: func(t *testing.T, body chatUpstreamBody) {
				if body.ReasoningEffort != "low" {
					t.Errorf("reasoning_effort: got %q, want low for budget_tokens 1024", body.ReasoningEffort)
				}
			}},
		{name: "assistant prefill",
			params: anthropic.MessageNewParams{Model: "gpt-test", MaxTokens: 256, Messages: []anthropic.MessageParam{
				anthropic.NewUserMessage(anthropic.NewTextBlock("Give me JSON.")),
				anthropic.NewAssistantMessage(anthropic.NewTextBlock("{")),
			}},
			check: func(t *testing.T, body chatUpstreamBody) {
				msgs := body.nonSystem()
				if len(msgs) != 2 || msgs[1].Role != "assistant" || msgs[1].text(t) != "{" {
					t.Errorf("messages: got %s, want the prefill forwarded as history", body.raw["messages"])
				}
			},
			dropped: []string{"assistant_prefill"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := staticUpstream(t, upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":"ok"}`, "stop", oaiUsage(20, 0, 1))})
			gw := startGateway(t, unusedUpstream(t), up)
			client := anthropicClient(gw)
			var httpResp *http.Response
			if _, err := client.Messages.New(callContext(t), tc.params, option.WithResponseInto(&httpResp)); err != nil {
				t.Fatalf("Messages.New: %v", err)
			}
			rec, body := openAIUpstreamRequest(t, up)
			if strings.Contains(string(rec.Body), "cache_control") {
				t.Errorf("upstream body carries cache_control: %s", rec.Body)
			}
			tc.check(t, body)
			got := strings.Split(httpResp.Header.Get("Tollgate-Dropped-Params"), ",")
			for _, d := range tc.dropped {
				if !slices.Contains(got, d) {
					t.Errorf("tollgate-dropped-params: got %q, want it to list %s", httpResp.Header.Get("Tollgate-Dropped-Params"), d)
				}
			}
		})
	}
}

func TestTranslateSyntheticSignatureAcrossModels(t *testing.T) {
	t.Parallel()
	// An agent gets a thinking block signed by tollgate from gpt-test, then
	// sends its history to claude-test, a real Anthropic upstream, which
	// would reject the signature (TRANSLATION.md §1.8.4, T17).
	oai := staticUpstream(t, upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":null,"reasoning_content":"Need the weather first.",`+
		`"tool_calls":[{"id":"call_w1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]}`, "tool_calls", oaiUsage(70, 0, 20))})
	ant := staticUpstream(t, upstreamtest.Reply{Body: antMessage(`[{"type":"text","text":"It is 18°C."}]`, "end_turn", antUsage(90, 0, 8))})
	base := startGateway(t, ant, oai)
	client := anthropicClient(base)

	first, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{
		Model: "gpt-test", MaxTokens: 4096, Messages: userText("Weather in Paris?"), Tools: []anthropic.ToolUnionParam{weatherTool},
		Thinking: anthropic.ThinkingConfigParamOfEnabled(2048),
	})
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	if len(first.Content) != 2 || first.Content[0].Type != "thinking" || first.Content[1].Type != "tool_use" {
		t.Fatalf("first answer: got %s, want thinking then tool_use", first.RawJSON())
	}
	if !syntheticSignature.MatchString(first.Content[0].Signature) {
		t.Fatalf("first answer signature: got %q, want a tollgate.v1. signature", first.Content[0].Signature)
	}

	second, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{
		Model: "claude-test", MaxTokens: 4096, Tools: []anthropic.ToolUnionParam{weatherTool},
		Thinking: anthropic.ThinkingConfigParamOfEnabled(2048),
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?")),
			first.ToParam(),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(first.Content[1].ID, "18°C", false)),
		},
	})
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if len(second.Content) != 1 || second.Content[0].Text != "It is 18°C." {
		t.Errorf("second answer: got %s", second.RawJSON())
	}
	rec, body := anthropicUpstreamRequest(t, ant)
	if strings.Contains(string(rec.Body), "tollgate.v1.") {
		t.Errorf("the Anthropic upstream received a tollgate-made signature: %s", rec.Body)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("upstream messages: got %d, want 3: %s", len(body.Messages), body.raw["messages"])
	}
	asst := antBlocks(t, "upstream assistant content", body.Messages[1].Content)
	if len(asst) != 1 || asst[0].Type != "tool_use" || asst[0].ID != "call_w1" {
		t.Errorf("upstream assistant content: got %s, want only the tool_use", body.Messages[1].Content)
	}
	// The last tool-use turn lost its leading thinking block: Anthropic would
	// refuse thinking for this request, so it is off.
	if v, ok := body.raw["thinking"]; ok {
		t.Errorf("upstream thinking: got %s, want none", v)
	}
}

// TestTranslateAnthropicClientSystemMessages: Claude Code puts
// {"role":"system"} entries inside messages (mid-conversation system
// reminders). On gpt-test each becomes a system message where it stands;
// one between a tool call and its result follows the tool message, which
// OpenAI wants right after the call.
func TestTranslateAnthropicClientSystemMessages(t *testing.T) {
	t.Parallel()
	bash := anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "Bash", Description: anthropic.String("Run a command"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"command": map[string]any{"type": "string"}}, Required: []string{"command"}}}}
	system := func(blocks ...anthropic.ContentBlockParamUnion) anthropic.MessageParam {
		return anthropic.MessageParam{Role: anthropic.MessageParamRoleSystem, Content: blocks}
	}
	params := anthropic.MessageNewParams{
		Model: "gpt-test", MaxTokens: 1024, Tools: []anthropic.ToolUnionParam{bash},
		System: []anthropic.TextBlockParam{{Text: "You are a coding agent."}},
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("<system-reminder>\nUse go test.\n</system-reminder>"), anthropic.NewTextBlock("run the tests")),
			system(anthropic.NewTextBlock("Skills available: review.")),
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_01Bash", map[string]any{"command": "go test ./..."}, "Bash")),
			system(anthropic.NewTextBlock("Plan mode is active."), anthropic.NewTextBlock("Do not edit files.")),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_01Bash", "ok  \tgithub.com/x/y\t0.2s", false), anthropic.NewTextBlock("and now?")),
			system(anthropic.NewTextBlock("placeholder")), // sent as a plain string, below
		},
	}
	// The last entry's content as a plain string, as Claude Code sends it.
	asString := option.WithJSONSet("messages.5.content", "The todo list is empty.")
	wantRoles := []string{"system", "user", "system", "assistant", "tool", "system", "user", "system"}
	wantSystem := map[int]string{0: "You are a coding agent.", 2: "Skills available: review.", 5: "Plan mode is active.\n\nDo not edit files.", 7: "The todo list is empty."}

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: oaiCompletion(`{"role":"assistant","content":"All tests pass.","refusal":null}`, "stop", oaiUsage(120, 0, 5))}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: eventList(
					oaiChunk(`{"role":"assistant","content":""}`, ""), oaiChunk(`{"content":"All tests"}`, ""), oaiChunk(`{"content":" pass."}`, ""),
					oaiChunk(`{}`, "stop"), oaiUsageChunk(oaiUsage(120, 0, 5)), oaiDone)}
			}
			up := staticUpstream(t, rep)
			capture := new(clientCapture)
			client := anthropicClient(startGateway(t, unusedUpstream(t), up), option.WithAPIKey(masterKey), option.WithMiddleware(capture.middleware))
			msg, _ := askAnthropic(t, client, params, streaming, asString)

			if len(msg.Content) != 1 || msg.Content[0].Text != "All tests pass." || msg.StopReason != anthropic.StopReasonEndTurn {
				t.Errorf("answer: got %s, want one text block \"All tests pass.\" ending end_turn", msg.RawJSON())
			}
			_, sent := capture.sent(t)
			var sentBody struct {
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(sent, &sentBody); err != nil || len(sentBody.Messages) != 6 {
				t.Fatalf("the SDK's request: %v: %s", err, sent)
			}
			if m := sentBody.Messages[5]; m.Role != "system" || string(m.Content) != `"The todo list is empty."` {
				t.Fatalf("the SDK sent messages[5] %s %s, want a system entry with string content", m.Role, m.Content)
			}

			_, body := openAIUpstreamRequest(t, up)
			var roles []string
			for _, m := range body.Messages {
				roles = append(roles, m.Role)
			}
			if !slices.Equal(roles, wantRoles) {
				t.Fatalf("upstream roles: got %q, want %q\n%s", roles, wantRoles, body.raw["messages"])
			}
			for i, want := range wantSystem {
				if got := body.Messages[i].text(t); got != want {
					t.Errorf("upstream messages[%d]: got %q, want %q", i, got, want)
				}
			}
			if m := body.Messages[4]; m.ToolCallID != "toolu_01Bash" {
				t.Errorf("upstream messages[4]: got tool_call_id %q, want the tool result right after the call", m.ToolCallID)
			}
			if got := body.Messages[6].text(t); got != "and now?" {
				t.Errorf("upstream messages[6]: got %q, want the user's text after the held system message", got)
			}
		})
	}

	t.Run("image refused", func(t *testing.T) {
		t.Parallel()
		up := unusedUpstream(t)
		client := anthropicClient(startGateway(t, unusedUpstream(t), up))
		_, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{
			Model: "gpt-test", MaxTokens: 64,
			Messages: []anthropic.MessageParam{
				anthropic.NewUserMessage(anthropic.NewTextBlock("hi")),
				system(anthropic.NewTextBlock("look:"), anthropic.NewImageBlockBase64("image/png", pngBase64)),
			},
		})
		apiErr := anthropicError(t, err, http.StatusBadRequest, "invalid_request_error")
		if !strings.Contains(apiErr.RawJSON(), `messages[1].content[1]: system messages take text blocks only`) {
			t.Errorf("error body: got %s, want it to name messages[1].content[1]", apiErr.RawJSON())
		}
		noRequests(t, up)
	})
}
