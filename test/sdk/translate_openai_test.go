package sdk_test

// Translation lane, part two: the OpenAI SDK calling claude-test, whose
// upstream speaks the Anthropic Messages API.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// ---- what the Anthropic upstream received ----

type messagesUpstreamBody struct {
	Model       string           `json:"model"`
	MaxTokens   int64            `json:"max_tokens"`
	System      json.RawMessage  `json:"system"`
	Messages    []antUpMessage   `json:"messages"`
	Temperature *float64         `json:"temperature"`
	Stream      *bool            `json:"stream"`
	Tools       []antUpTool      `json:"tools"`
	ToolChoice  *antUpToolChoice `json:"tool_choice"`
	Thinking    *antUpThinking   `json:"thinking"`
	raw         map[string]json.RawMessage
}

type antUpMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type antUpTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type antUpToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type antUpThinking struct {
	Type         string `json:"type"`
	BudgetTokens int64  `json:"budget_tokens"`
}

type antUpBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

// antBlocks reads content that is a string or an array of blocks as blocks.
func antBlocks(t *testing.T, what string, raw json.RawMessage) []antUpBlock {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []antUpBlock{{Type: "text", Text: s}}
	}
	var bs []antUpBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		t.Fatalf("%s is neither a string nor blocks: %v: %s", what, err, raw)
	}
	return bs
}

// antText is the concatenated text of text-only content.
func antText(t *testing.T, what string, raw json.RawMessage) string {
	t.Helper()
	var b strings.Builder
	for _, bl := range antBlocks(t, what, raw) {
		if bl.Type != "text" {
			t.Errorf("%s: unexpected %q block where only text was expected: %s", what, bl.Type, raw)
		}
		b.WriteString(bl.Text)
	}
	return b.String()
}

// anthropicUpstreamRequest returns the one request the Anthropic upstream
// received and its decoded body, after checking that it went to Messages
// with the gateway's own credential only.
func anthropicUpstreamRequest(t *testing.T, up *upstreamtest.Server) (upstreamtest.Received, messagesUpstreamBody) {
	t.Helper()
	rec := onlyRequest(t, up)
	if rec.Method != http.MethodPost || rec.Path != "/v1/messages" {
		t.Errorf("upstream request: got %s %s, want POST /v1/messages", rec.Method, rec.Path)
	}
	if got := rec.Header.Get("X-Api-Key"); got != upstreamKey {
		t.Errorf("upstream x-api-key: got %q, want %q", got, upstreamKey)
	}
	if got := rec.Header.Get("Authorization"); got != "" {
		t.Errorf("upstream authorization: got %q, want none on an Anthropic upstream", got)
	}
	if rec.Header.Get("Anthropic-Version") == "" {
		t.Errorf("upstream anthropic-version: got none, want one (the Messages API requires it)")
	}
	assertNoClientKey(t, rec)
	var body messagesUpstreamBody
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatalf("upstream body is not a Messages request: %v: %s", err, rec.Body)
	}
	body.raw = jsonMembers(t, rec.Body)
	if body.Model != anthropicUpstreamModel {
		t.Errorf("upstream model: got %q, want %q", body.Model, anthropicUpstreamModel)
	}
	if body.MaxTokens <= 0 {
		t.Errorf("upstream max_tokens: got %d, want a positive limit (TRANSLATION.md §1.7)", body.MaxTokens)
	}
	return rec, body
}

func (b messagesUpstreamBody) assertStream(t *testing.T, streaming bool) {
	t.Helper()
	if got := b.Stream != nil && *b.Stream; got != streaming {
		t.Errorf("upstream stream: got %v, want %v", got, streaming)
	}
	if v, ok := b.raw["stream_options"]; ok {
		t.Errorf("upstream body has OpenAI member stream_options: %s", v)
	}
}

// ---- the OpenAI SDK side ----

// askOpenAI makes one call, streaming or not, and returns the completion
// the client ends up with; a stream must end cleanly, every chunk accepted
// by the SDK's accumulator, with exactly one finish_reason.
func askOpenAI(t *testing.T, client openai.Client, params openai.ChatCompletionNewParams, streaming bool, opts ...option.RequestOption) (openai.ChatCompletion, *streamResult) {
	t.Helper()
	if !streaming {
		res, err := client.Chat.Completions.New(callContext(t), params, opts...)
		if err != nil {
			t.Fatalf("Chat.Completions.New: %v", err)
		}
		if len(res.Choices) != 1 {
			t.Fatalf("choices: got %d, want 1: %s", len(res.Choices), res.RawJSON())
		}
		return *res, nil
	}
	r := readChatStream(t, client, params, opts...)
	if r.err != nil {
		t.Fatalf("stream error after %d chunks: %v", r.chunks, r.err)
	}
	if r.rejected != 0 {
		t.Errorf("the SDK's accumulator rejected %d of %d chunks", r.rejected, r.chunks)
	}
	if len(r.acc.Choices) != 1 {
		t.Fatalf("accumulated choices: got %d, want 1", len(r.acc.Choices))
	}
	finishes, roles := 0, 0
	for _, c := range r.chunkList {
		for _, ch := range c.Choices {
			if ch.FinishReason != "" {
				finishes++
			}
			if ch.Delta.Role != "" {
				roles++
			}
		}
	}
	if finishes != 1 {
		t.Errorf("chunks with a finish_reason: got %d, want exactly 1", finishes)
	}
	if roles != 1 || len(r.chunkList[0].Choices) == 0 || r.chunkList[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("role: got it on %d chunks, want it once, on the first chunk (TRANSLATION.md §3.1)", roles)
	}
	return r.acc.ChatCompletion, r
}

// extraString reads a non-standard string member from an SDK object's
// extra fields ("" when absent or null).
func extraString(t *testing.T, what string, fields map[string]respjson.Field, key string) string {
	t.Helper()
	f, ok := fields[key]
	if !ok || f.Raw() == "" || f.Raw() == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(f.Raw()), &s); err != nil {
		t.Errorf("%s %s: not a string: %s", what, key, f.Raw())
	}
	return s
}

func getWeatherFunction() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Get the current weather in a given location"),
		Parameters: shared.FunctionParameters{
			"type": "object",
			"properties": map[string]any{
				"location": map[string]any{"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
				"unit":     map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
			},
			"required": []string{"location"},
		},
	})
}

func userOnly(text string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}
}

// ---- tests: OpenAI SDK → claude-test (Anthropic upstream) ----

func TestTranslateOpenAIClientText(t *testing.T) {
	t.Parallel()
	fragments := []string{"Bonjour", " ! <b>&</b>", " ünïcödé", " ✓ 🌦"}
	stream := events(
		one(antMessageStart(antUsage(25, 0, 1))),
		antTextBlock(0, fragments...),
		one(antEvent(`{"type": "ping"}`)),
		antMessageEnd("end_turn", 14),
	)
	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: antMessage(`[{"type":"text","text":`+jsonQuote(unicodeText)+`}]`, "end_turn", antUsage(25, 0, 14))}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: stream}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			params := chatParams("claude-test", "Say hello in French — <b>&</b>?")
			params.MaxCompletionTokens = openai.Int(300)
			params.Temperature = openai.Float(0.4)
			res, r := askOpenAI(t, client, params, streaming)

			c := res.Choices[0]
			if c.Message.Content != unicodeText {
				t.Errorf("content: got %q, want %q", c.Message.Content, unicodeText)
			}
			if c.FinishReason != "stop" || c.Message.Role != "assistant" {
				t.Errorf("finish_reason/role: got %q/%q, want stop/assistant", c.FinishReason, c.Message.Role)
			}
			if len(c.Message.ToolCalls) != 0 {
				t.Errorf("tool_calls: got %d, want none", len(c.Message.ToolCalls))
			}
			if res.Model != anthropicUpstreamModel {
				t.Errorf("model: got %q, want %s (the upstream model, as on the pass-through lane)", res.Model, anthropicUpstreamModel)
			}
			if want := "chatcmpl-" + strings.TrimPrefix(antUpstreamID, "msg_"); res.ID != want {
				t.Errorf("id: got %q, want %q (TRANSLATION.md §2.5)", res.ID, want)
			}
			if res.Created <= 0 {
				t.Errorf("created: got %d, want a unix time", res.Created)
			}
			if streaming {
				if len(r.withUsage) != 0 || r.usageOnly != 0 {
					t.Errorf("got %d chunks with usage (%d without choices), want none: the client did not ask for usage", len(r.withUsage), r.usageOnly)
				}
				var deltas []string
				for _, ch := range r.chunkList {
					if len(ch.Choices) == 1 && ch.Choices[0].Delta.Content != "" {
						deltas = append(deltas, ch.Choices[0].Delta.Content)
					}
				}
				if !slices.Equal(deltas, fragments) {
					t.Errorf("content deltas: got %q, want the upstream's fragments %q", deltas, fragments)
				}
				// role chunk, one per fragment, finish chunk: the ping is not a chunk.
				if want := len(fragments) + 2; r.chunks != want {
					t.Errorf("chunks: got %d, want %d", r.chunks, want)
				}
			} else if u := res.Usage; u.PromptTokens != 25 || u.CompletionTokens != 14 || u.TotalTokens != 39 {
				t.Errorf("usage: got %s, want prompt 25 completion 14 total 39", fmtUsage(u))
			}

			_, body := anthropicUpstreamRequest(t, up)
			body.assertStream(t, streaming)
			if got := antText(t, "upstream system", body.System); got != "Be brief." {
				t.Errorf("upstream system: got %q, want the hoisted system message %q", got, "Be brief.")
			}
			wantMsgs := []struct{ role, text string }{
				{"user", "an earlier question"}, {"assistant", "an earlier answer"}, {"user", "Say hello in French — <b>&</b>?"},
			}
			if len(body.Messages) != len(wantMsgs) {
				t.Fatalf("upstream messages: got %d, want %d: %s", len(body.Messages), len(wantMsgs), body.raw["messages"])
			}
			for i, w := range wantMsgs {
				m := body.Messages[i]
				if got := antText(t, fmt.Sprintf("upstream message %d", i), m.Content); m.Role != w.role || got != w.text {
					t.Errorf("upstream message %d: got %s %q, want %s %q", i, m.Role, got, w.role, w.text)
				}
			}
			if body.MaxTokens != 300 {
				t.Errorf("upstream max_tokens: got %d, want the client's max_completion_tokens 300", body.MaxTokens)
			}
			if p := body.Temperature; p == nil || *p != 0.4 {
				t.Errorf("upstream temperature: got %v, want 0.4", p)
			}
			for _, k := range []string{"max_completion_tokens", "n", "stream_options"} {
				if v, ok := body.raw[k]; ok {
					t.Errorf("upstream body has OpenAI member %s: %s", k, v)
				}
			}
		})
	}
}

func TestTranslateOpenAIClientToolCall(t *testing.T) {
	t.Parallel()
	const (
		toolID   = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
		preamble = "Okay, let's check the weather for San Francisco, CA:"
		wantArgs = `{"location": "San Francisco, CA", "unit": "fahrenheit"}`
	)
	// The official tool-use stream (TRANSLATION.md §3.1), with its empty
	// first input_json_delta.
	stream := events(
		one(antMessageStart(antUsage(472, 0, 2))),
		antTextBlock(0, "Okay", ", let's check the weather for San Francisco, CA:"),
		antToolBlock(1, toolID, "get_weather", "", `{"location":`, ` "San Francisco, CA", `, `"unit": "fahrenheit"}`),
		antMessageEnd("tool_use", 89),
	)
	whole := antMessage(`[{"type":"text","text":`+jsonQuote(preamble)+`},`+
		`{"type":"tool_use","id":"`+toolID+`","name":"get_weather","input":`+wantArgs+`}]`, "tool_use", antUsage(472, 0, 89))

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: whole}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: stream}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			params := openai.ChatCompletionNewParams{
				Model: "claude-test", Messages: userOnly("What is the weather like in San Francisco?"),
				Tools: []openai.ChatCompletionToolUnionParam{getWeatherFunction()},
			}
			res, r := askOpenAI(t, client, params, streaming)

			c := res.Choices[0]
			if c.FinishReason != "tool_calls" {
				t.Errorf("finish_reason: got %q, want tool_calls", c.FinishReason)
			}
			if c.Message.Content != preamble {
				t.Errorf("content: got %q, want %q", c.Message.Content, preamble)
			}
			if len(c.Message.ToolCalls) != 1 {
				t.Fatalf("tool_calls: got %d, want 1: %s", len(c.Message.ToolCalls), res.RawJSON())
			}
			call := c.Message.ToolCalls[0]
			if call.ID != toolID || call.Type != "function" || call.Function.Name != "get_weather" {
				t.Errorf("tool call: got id %q type %q name %q, want %s function get_weather", call.ID, call.Type, call.Function.Name, toolID)
			}
			assertSameJSON(t, "tool call arguments", []byte(call.Function.Arguments), []byte(wantArgs))
			if streaming {
				if len(r.finishedTC) != 1 || r.finishedTC[0].ID != toolID || r.finishedTC[0].Name != "get_weather" {
					t.Errorf("finished tool calls: got %+v, want one get_weather call %s", r.finishedTC, toolID)
				}
				// id, type and name only in the first fragment; every fragment index 0 (T26).
				frags := 0
				for _, ch := range r.chunkList {
					for _, ck := range ch.Choices {
						for _, tc := range ck.Delta.ToolCalls {
							if tc.Index != 0 {
								t.Errorf("tool-call fragment index: got %d, want 0", tc.Index)
							}
							first := frags == 0
							if (tc.ID != "") != first || (tc.Function.Name != "") != first || (tc.Type != "") != first {
								t.Errorf("tool-call fragment %d: got id %q type %q name %q, want them on the first fragment only", frags, tc.ID, tc.Type, tc.Function.Name)
							}
							if !first && tc.Function.Arguments == "" {
								t.Errorf("tool-call fragment %d has empty arguments (the upstream's empty partial_json must be skipped)", frags)
							}
							frags++
						}
					}
				}
				if frags != 4 {
					t.Errorf("tool-call fragments: got %d, want 4 (announcement and three argument pieces)", frags)
				}
			}

			_, body := anthropicUpstreamRequest(t, up)
			body.assertStream(t, streaming)
			if len(body.Tools) != 1 {
				t.Fatalf("upstream tools: got %d, want 1: %s", len(body.Tools), body.raw["tools"])
			}
			tool := body.Tools[0]
			if tool.Name != "get_weather" || tool.Description != "Get the current weather in a given location" {
				t.Errorf("upstream tool: got name %q description %q, want the client's function", tool.Name, tool.Description)
			}
			assertSameJSON(t, "upstream input_schema", tool.InputSchema, []byte(`{"type":"object","properties":{`+
				`"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},`+
				`"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"]}`))
			if tc := body.ToolChoice; tc != nil && tc.Type != "auto" {
				t.Errorf("upstream tool_choice: got %+v, want none or auto", tc)
			}
		})
	}
}

func TestTranslateOpenAIClientParallelToolCalls(t *testing.T) {
	t.Parallel()
	// Blocks [thinking(0), text(1), tool_use(2), tool_use(3)] → tool-call
	// indexes 0 and 1 (T33).
	stream := events(
		one(antMessageStart(antUsage(300, 0, 1))),
		[][]byte{
			antEvent(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`),
			antEvent(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Two independent lookups."}}`),
			antEvent(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIMparallelSig=="}}`),
			antEvent(`{"type":"content_block_stop","index":0}`),
		},
		antTextBlock(1, "Checking both."),
		antToolBlock(2, "toolu_01Aa", "list_files", `{"path":`, `"src"}`),
		antToolBlock(3, "toolu_01Bb", "search_files", `{"query"`, `:"TODO"}`),
		antMessageEnd("tool_use", 77),
	)
	whole := antMessage(`[{"type":"thinking","thinking":"Two independent lookups.","signature":"EqQBCgIYAhIMparallelSig=="},`+
		`{"type":"text","text":"Checking both."},`+
		`{"type":"tool_use","id":"toolu_01Aa","name":"list_files","input":{"path":"src"}},`+
		`{"type":"tool_use","id":"toolu_01Bb","name":"search_files","input":{"query":"TODO"}}]`, "tool_use", antUsage(300, 0, 77))
	fn := func(name, prop string) openai.ChatCompletionToolUnionParam {
		return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name,
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{prop: map[string]any{"type": "string"}}}})
	}

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: whole}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: stream}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			res, r := askOpenAI(t, client, openai.ChatCompletionNewParams{
				Model: "claude-test", Messages: userOnly("List src and find TODOs."),
				Tools: []openai.ChatCompletionToolUnionParam{fn("list_files", "path"), fn("search_files", "query")},
			}, streaming)

			c := res.Choices[0]
			want := []struct{ id, name, args string }{
				{"toolu_01Aa", "list_files", `{"path":"src"}`},
				{"toolu_01Bb", "search_files", `{"query":"TODO"}`},
			}
			if len(c.Message.ToolCalls) != len(want) {
				var got []string
				for _, call := range c.Message.ToolCalls {
					got = append(got, call.ID+" "+call.Function.Name+" "+call.Function.Arguments)
				}
				t.Fatalf("tool_calls: got %d %q, want %d", len(got), got, len(want))
			}
			for i, w := range want {
				call := c.Message.ToolCalls[i]
				if call.ID != w.id || call.Function.Name != w.name {
					t.Errorf("tool_calls[%d]: got id %q name %q, want %s %s", i, call.ID, call.Function.Name, w.id, w.name)
				}
				assertSameJSON(t, fmt.Sprintf("tool_calls[%d] arguments", i), []byte(call.Function.Arguments), []byte(w.args))
			}
			if c.FinishReason != "tool_calls" || c.Message.Content != "Checking both." {
				t.Errorf("finish_reason/content: got %q/%q, want tool_calls/%q", c.FinishReason, c.Message.Content, "Checking both.")
			}
			if streaming {
				seen := map[int64]bool{}
				for _, ch := range r.chunkList {
					for _, ck := range ch.Choices {
						for _, tc := range ck.Delta.ToolCalls {
							if tc.Index != 0 && tc.Index != 1 {
								t.Errorf("tool-call fragment index: got %d, want 0 or 1 (dense per message, not the block index)", tc.Index)
							}
							if !seen[tc.Index] && tc.ID == "" {
								t.Errorf("first fragment of tool call %d carries no id", tc.Index)
							}
							seen[tc.Index] = true
						}
					}
				}
			}
		})
	}
}

func TestTranslateOpenAIClientToolRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		callID    string
		wantUseID string // Anthropic ids are ^[a-zA-Z0-9_-]+$ (T07)
		streaming bool
	}{
		{"whole", "call_DdmO9pD3xa9XTPNJ32zg2hcA", "call_DdmO9pD3xa9XTPNJ32zg2hcA", false},
		{"stream", "call_DdmO9pD3xa9XTPNJ32zg2hcA", "call_DdmO9pD3xa9XTPNJ32zg2hcA", true},
		{"kimi-style id", "functions.get_weather:0", "functions_get_weather_0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testOpenAIToolRoundTrip(t, tc.callID, tc.wantUseID, tc.streaming)
		})
	}
}

func testOpenAIToolRoundTrip(t *testing.T, callID, wantUseID string, streaming bool) {
	history := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You are a weather bot."),
		openai.UserMessage("What's the weather in Paris?"),
		{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
			Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfString: openai.String("")},
			ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       callID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"location":"Paris","unit":"celsius"}`},
			}}},
		}},
		openai.ToolMessage("18°C, sunny <&>", callID),
		openai.UserMessage("Thanks! Anything else?"),
	}
	const answer = "It's 18°C and sunny in Paris."
	rep := upstreamtest.Reply{Body: antMessage(`[{"type":"text","text":`+jsonQuote(answer)+`}]`, "end_turn", antUsage(180, 0, 12))}
	if streaming {
		rep = upstreamtest.Reply{Gap: eventGap, Events: events(one(antMessageStart(antUsage(180, 0, 1))), antTextBlock(0, answer), antMessageEnd("end_turn", 12))}
	}
	up := staticUpstream(t, rep)
	base := startGateway(t, up, unusedUpstream(t))
	client := openAIClient(base)
	res, _ := askOpenAI(t, client, openai.ChatCompletionNewParams{
		Model: "claude-test", Messages: history, Tools: []openai.ChatCompletionToolUnionParam{getWeatherFunction()},
	}, streaming)
	if got := res.Choices[0].Message.Content; got != answer {
		t.Errorf("answer: got %q, want %q", got, answer)
	}

	_, body := anthropicUpstreamRequest(t, up)
	if got := antText(t, "upstream system", body.System); got != "You are a weather bot." {
		t.Errorf("upstream system: got %q", got)
	}
	roles := make([]string, len(body.Messages))
	for i, m := range body.Messages {
		roles[i] = m.Role
	}
	if want := []string{"user", "assistant", "user"}; !slices.Equal(roles, want) {
		t.Fatalf("upstream message roles: got %q, want %q: %s", roles, want, body.raw["messages"])
	}
	// The assistant turn: only the tool_use, no empty text block (T06).
	asst := antBlocks(t, "upstream assistant content", body.Messages[1].Content)
	if len(asst) != 1 || asst[0].Type != "tool_use" {
		t.Fatalf("upstream assistant content: got %s, want exactly one tool_use block", body.Messages[1].Content)
	}
	use := asst[0]
	if use.ID != wantUseID || use.Name != "get_weather" {
		t.Errorf("upstream tool_use: got id %q name %q, want %s get_weather", use.ID, use.Name, wantUseID)
	}
	assertSameJSON(t, "upstream tool_use input", use.Input, []byte(`{"location":"Paris","unit":"celsius"}`))
	// The next user turn starts with the tool_result, then the user's text.
	next := antBlocks(t, "upstream user content", body.Messages[2].Content)
	if len(next) != 2 || next[0].Type != "tool_result" || next[1].Type != "text" {
		t.Fatalf("upstream user content after the tool call: got %s, want tool_result then text", body.Messages[2].Content)
	}
	if next[0].ToolUseID != use.ID {
		t.Errorf("tool_result tool_use_id: got %q, want the tool_use's id %q", next[0].ToolUseID, use.ID)
	}
	if got := antText(t, "tool_result content", next[0].Content); got != "18°C, sunny <&>" {
		t.Errorf("tool_result content: got %q, want %q", got, "18°C, sunny <&>")
	}
	if next[1].Text != "Thanks! Anything else?" {
		t.Errorf("user text after the tool result: got %q", next[1].Text)
	}
	if len(body.Tools) != 1 || body.Tools[0].Name != "get_weather" {
		t.Errorf("upstream tools: got %s, want get_weather", body.raw["tools"])
	}
}

func TestTranslateOpenAIClientReasoning(t *testing.T) {
	t.Parallel()
	const (
		thinking  = "Let me solve this step by step:\n\n1. First break down 27 * 453 <carefully> & check"
		signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds5+Ypl/ZBRRBLoeMUQ=="
		answer    = "27 × 453 = 12,231 ✓"
	)
	stream := events(
		one(antMessageStart(antUsage(50, 0, 1))),
		[][]byte{
			antEvent(`{"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}`),
			antEvent(`{"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me solve this step by step:\n\n1. First break down 27 * 453"}}`),
			antEvent(`{"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": " <carefully> & check"}}`),
			antEvent(`{"type": "ping"}`),
			antEvent(`{"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "` + signature + `"}}`),
			antEvent(`{"type": "content_block_stop", "index": 0}`),
		},
		antTextBlock(1, "27 × 453", " = 12,231 ✓"),
		antMessageEnd("end_turn", 320),
	)
	whole := antMessage(`[{"type":"thinking","thinking":`+jsonQuote(thinking)+`,"signature":"`+signature+`"},{"type":"text","text":`+jsonQuote(answer)+`}]`,
		"end_turn", antUsage(50, 0, 320))

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: whole}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: stream}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			params := openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("What is 27 * 453?"), ReasoningEffort: shared.ReasoningEffortMedium}
			res, r := askOpenAI(t, client, params, streaming)

			c := res.Choices[0]
			if c.Message.Content != answer || c.FinishReason != "stop" {
				t.Errorf("content/finish_reason: got %q/%q, want %q/stop", c.Message.Content, c.FinishReason, answer)
			}
			var reasoning string
			if streaming {
				for i, ch := range r.chunkList {
					if strings.Contains(ch.RawJSON(), signature) {
						t.Errorf("chunk %d carries the thinking signature, which is not exposed by default: %s", i, ch.RawJSON())
					}
					if len(ch.Choices) == 1 {
						reasoning += extraString(t, "chunk delta", ch.Choices[0].Delta.JSON.ExtraFields, "reasoning_content")
					}
				}
			} else {
				reasoning = extraString(t, "message", c.Message.JSON.ExtraFields, "reasoning_content")
				if strings.Contains(res.RawJSON(), signature) {
					t.Errorf("completion carries the thinking signature, which is not exposed by default: %s", res.RawJSON())
				}
			}
			if reasoning != thinking {
				t.Errorf("reasoning_content: got %q, want the thinking text %q", reasoning, thinking)
			}
			if strings.Contains(c.Message.Content, "step by step") {
				t.Errorf("content carries thinking text: %q", c.Message.Content)
			}

			_, body := anthropicUpstreamRequest(t, up)
			// medium on a budget-mode model → budget 8192 (TRANSLATION.md §1.8.1).
			if th := body.Thinking; th == nil || th.Type != "enabled" || th.BudgetTokens != 8192 {
				t.Errorf("upstream thinking: got %s, want {type:enabled, budget_tokens:8192}", body.raw["thinking"])
			} else if body.MaxTokens <= th.BudgetTokens {
				t.Errorf("upstream max_tokens: got %d, want more than budget_tokens %d (TRANSLATION.md §1.7)", body.MaxTokens, th.BudgetTokens)
			}
			if v, ok := body.raw["reasoning_effort"]; ok {
				t.Errorf("upstream body has OpenAI member reasoning_effort: %s", v)
			}
		})
	}
}

func TestTranslateOpenAIClientImage(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: antMessage(`[{"type":"text","text":"A single red pixel."}]`, "end_turn", antUsage(95, 0, 6))}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: events(one(antMessageStart(antUsage(95, 0, 1))), antTextBlock(0, "A single red pixel."), antMessageEnd("end_turn", 6))}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			res, _ := askOpenAI(t, client, openai.ChatCompletionNewParams{
				Model: "claude-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
					openai.TextContentPart("What colour is this pixel?"),
					openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + pngBase64}),
				})},
			}, streaming)
			if got := res.Choices[0].Message.Content; got != "A single red pixel." {
				t.Errorf("answer: got %q", got)
			}

			_, body := anthropicUpstreamRequest(t, up)
			if len(body.Messages) != 1 || body.Messages[0].Role != "user" {
				t.Fatalf("upstream messages: got %s, want one user message", body.raw["messages"])
			}
			blocks := antBlocks(t, "upstream user content", body.Messages[0].Content)
			if len(blocks) != 2 {
				t.Fatalf("upstream user content: got %s, want text then image", body.Messages[0].Content)
			}
			if b := blocks[0]; b.Type != "text" || b.Text != "What colour is this pixel?" {
				t.Errorf("upstream block 0: got type %q text %q, want the client's text", b.Type, b.Text)
			}
			b := blocks[1]
			if b.Type != "image" || b.Source == nil {
				t.Fatalf("upstream block 1: got %s, want an image block", body.Messages[0].Content)
			}
			if s := b.Source; s.Type != "base64" || s.MediaType != "image/png" || s.Data != pngBase64 {
				t.Errorf("upstream image source: got type %q media_type %q data %.20q…, want base64 image/png and the client's bytes", s.Type, s.MediaType, s.Data)
			}
		})
	}
}

func TestTranslateOpenAIClientCacheUsage(t *testing.T) {
	t.Parallel()
	// Anthropic input_tokens exclude cache reads; OpenAI prompt_tokens
	// include them (TRANSLATION.md §2.4, T21).
	for _, tc := range []struct {
		name         string
		streaming    bool
		includeUsage bool
	}{
		{"whole", false, false},
		{"stream with include_usage", true, true},
		{"stream without include_usage", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: antMessage(`[{"type":"text","text":"Cached answer."}]`, "end_turn", antUsage(200, 800, 10))}
			if tc.streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: events(
					one(antMessageStart(antUsage(200, 800, 1))),
					antTextBlock(0, "Cached ", "answer."),
					antMessageEnd("end_turn", 10))}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			params := openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("Same long prompt as before.")}
			if tc.includeUsage {
				params.StreamOptions.IncludeUsage = openai.Bool(true)
			}
			res, r := askOpenAI(t, client, params, tc.streaming)
			if got := res.Choices[0].Message.Content; got != "Cached answer." {
				t.Errorf("answer: got %q", got)
			}
			if tc.streaming && !tc.includeUsage {
				if len(r.withUsage) != 0 || r.usageOnly != 0 {
					t.Errorf("got %d chunks with usage (%d without choices), want none (T34)", len(r.withUsage), r.usageOnly)
				}
				return
			}
			u := res.Usage
			if u.PromptTokens != 1000 || u.PromptTokensDetails.CachedTokens != 800 || u.CompletionTokens != 10 || u.TotalTokens != 1010 {
				t.Errorf("usage: got %s, want prompt 1000 (cached 800) completion 10 total 1010", fmtUsage(u))
			}
			if !tc.streaming {
				return
			}
			// Exactly once: the SDK sums usage over chunks (TRANSLATION.md P5).
			if len(r.withUsage) != 1 || r.usageOnly != 1 {
				t.Errorf("got %d chunks with usage (%d without choices), want exactly 1", len(r.withUsage), r.usageOnly)
			}
			if last := r.chunkList[len(r.chunkList)-1]; len(last.Choices) != 0 || usageIsZero(last.Usage) {
				t.Errorf("last chunk: got %s, want the usage chunk with no choices, just before [DONE]", last.RawJSON())
			}
			anthropicUpstreamRequest(t, up)
		})
	}
}

func TestTranslateOpenAIClientUpstreamErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		reply      upstreamtest.Reply
		status     int
		typ, code  string
		message    string
		hidden     string // part of the upstream's message the client must not see
		retryAfter string
		noRetry    bool // the answer must carry x-should-retry: false
	}{
		{name: "429 rate limited",
			reply: upstreamtest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"7"}},
				Body: antError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")},
			status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "rate_limit_exceeded",
			message: "per-minute rate limit", retryAfter: "7"},
		{name: "500 api error",
			reply:  upstreamtest.Reply{Status: http.StatusInternalServerError, Body: antError("api_error", "Internal server error")},
			status: http.StatusInternalServerError, typ: "server_error", message: "Internal server error"},
		{name: "529 overloaded",
			reply: upstreamtest.Reply{Status: 529, Header: http.Header{"Retry-After": {"3"}}, Body: antError("overloaded_error", "Overloaded")},
			// 529 is not a status OpenAI clients know: 503 (TRANSLATION.md §4.2).
			status: http.StatusServiceUnavailable, typ: "service_unavailable_error", code: "server_is_overloaded",
			message: "Overloaded", retryAfter: "3"},
		// The upstream credential is the gateway's: not a 401 for the client
		// (§4.4), and the upstream's words about it stay in the gateway's log.
		{name: "401 upstream key rejected",
			reply:  upstreamtest.Reply{Status: http.StatusUnauthorized, Body: antError("authentication_error", "invalid x-api-key sk-ant-***wxyz")},
			status: http.StatusBadGateway, typ: "server_error", code: "upstream_auth_failed", message: "could not authenticate to the upstream provider", hidden: "wxyz", noRetry: true},
		{name: "400 prompt too long",
			reply:  upstreamtest.Reply{Status: http.StatusBadRequest, Body: antError("invalid_request_error", "prompt is too long: 210432 tokens > 200000 maximum")},
			status: http.StatusBadRequest, typ: "invalid_request_error", code: "context_length_exceeded", message: "prompt is too long"},
	} {
		for _, streaming := range []bool{false, true} {
			t.Run(tc.name+" "+modeName(streaming), func(t *testing.T) {
				t.Parallel()
				up := staticUpstream(t, tc.reply)
				base := startGateway(t, up, unusedUpstream(t))
				client := openAIClient(base)
				params := openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("hi")}
				var err error
				if streaming {
					r := readChatStream(t, client, params)
					if r.chunks != 0 {
						t.Errorf("got %d chunks before the error, want a plain HTTP error (TRANSLATION.md P4)", r.chunks)
					}
					err = r.err
				} else {
					var res *openai.ChatCompletion
					res, err = client.Chat.Completions.New(callContext(t), params)
					if err == nil {
						t.Fatalf("got completion %s, want an error", res.RawJSON())
					}
				}
				apiErr := openAIError(t, err, tc.status)
				if apiErr.Type != tc.typ || apiErr.Code != tc.code {
					t.Errorf("error type/code: got %q/%q, want %q/%q (%v)", apiErr.Type, apiErr.Code, tc.typ, tc.code, err)
				}
				if !strings.Contains(apiErr.Message, tc.message) {
					t.Errorf("error message: got %q, want the upstream's %q", apiErr.Message, tc.message)
				}
				if tc.hidden != "" && strings.Contains(apiErr.Message, tc.hidden) {
					t.Errorf("error message: got %q, which relays the upstream's %q", apiErr.Message, tc.hidden)
				}
				if got := apiErr.Response.Header.Get("Retry-After"); got != tc.retryAfter {
					t.Errorf("retry-after header: got %q, want %q", got, tc.retryAfter)
				}
				if got := apiErr.Response.Header.Get("X-Should-Retry"); tc.noRetry && got != "false" {
					t.Errorf("x-should-retry header: got %q, want false", got)
				}
				anthropicUpstreamRequest(t, up) // exactly one: no retry behind the client's back
			})
		}
	}
}

func TestTranslateOpenAIClientStreamFailure(t *testing.T) {
	t.Parallel()
	opening := events(
		one(antMessageStart(antUsage(20, 0, 1))),
		[][]byte{
			antEvent(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			antEvent(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial"}}`),
			antEvent(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" answer"}}`),
		},
	)
	for _, tc := range []struct {
		name     string
		reply    upstreamtest.Reply
		errParts []string // what the stream error must mention
	}{
		{"connection cut", upstreamtest.Reply{Events: opening, Cut: true, Gap: eventGap}, nil},
		{"body ends before message_stop", upstreamtest.Reply{Gap: eventGap, Events: opening}, nil},
		// T36: an error event after two text deltas.
		{"error event", upstreamtest.Reply{Gap: eventGap, Events: append(slices.Clone(opening),
			antEvent(`{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`))},
			[]string{"service_unavailable_error", "server_is_overloaded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := staticUpstream(t, tc.reply)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			params := openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("Tell me a story.")}
			params.StreamOptions.IncludeUsage = openai.Bool(true)
			r := readChatStream(t, client, params)
			if r.err == nil {
				t.Fatalf("stream ended cleanly after %d chunks, want an error (TRANSLATION.md P1)", r.chunks)
			}
			var streamErr *ssestream.StreamError
			if !errors.As(r.err, &streamErr) {
				t.Errorf("stream error: got %T %v, want the SDK's StreamError for an error payload", r.err, r.err)
			}
			for _, p := range tc.errParts {
				if !strings.Contains(r.err.Error(), p) {
					t.Errorf("stream error: got %v, want it to mention %q", r.err, p)
				}
			}
			if r.rejected != 0 {
				t.Errorf("the SDK's accumulator rejected %d chunks", r.rejected)
			}
			if len(r.acc.Choices) != 1 {
				t.Fatalf("accumulated choices: got %d, want 1", len(r.acc.Choices))
			}
			if fr := r.acc.Choices[0].FinishReason; fr != "" {
				t.Errorf("finish_reason: got %q from an interrupted stream, want none", fr)
			}
			if got := r.acc.Choices[0].Message.Content; got != "Partial answer" {
				t.Errorf("content before the failure: got %q, want %q", got, "Partial answer")
			}
			if len(r.withUsage) != 0 {
				t.Errorf("got %d usage chunks from an interrupted stream, want none", len(r.withUsage))
			}
			anthropicUpstreamRequest(t, up)
		})
	}
}

func TestTranslateOpenAIClientStructuredOutput(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"city":          map[string]any{"type": "string"},
			"temperature_c": map[string]any{"type": "number"},
		},
		"required":             []string{"city", "temperature_c"},
		"additionalProperties": false,
	}
	const wantJSON = `{"city": "Paris", "temperature_c": 18.5}`
	stream := events(
		one(antMessageStart(antUsage(140, 0, 1))),
		antToolBlock(0, "toolu_01JsonQ8rV3", "json_tool_call", `{"city": "Pa`, `ris", "temperature_c"`, `: 18.5}`),
		antMessageEnd("tool_use", 21),
	)
	whole := antMessage(`[{"type":"tool_use","id":"toolu_01JsonQ8rV3","name":"json_tool_call","input":`+wantJSON+`}]`, "tool_use", antUsage(140, 0, 21))

	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: whole}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: stream}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			res, _ := askOpenAI(t, client, openai.ChatCompletionNewParams{
				Model: "claude-test", Messages: userOnly("Weather report for Paris as JSON."),
				ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
					JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "weather_report", Schema: schema, Strict: openai.Bool(true)},
				}},
			}, streaming)

			c := res.Choices[0]
			assertSameJSON(t, "message.content", []byte(c.Message.Content), []byte(wantJSON))
			if streaming && c.Message.Content != wantJSON {
				t.Errorf("streamed content: got %q, want the upstream's fragments joined, %q", c.Message.Content, wantJSON)
			}
			if c.FinishReason != "stop" {
				t.Errorf("finish_reason: got %q, want stop (TRANSLATION.md §1.9)", c.FinishReason)
			}
			if len(c.Message.ToolCalls) != 0 {
				t.Errorf("tool_calls: got %+v, want none: the forced tool is the answer", c.Message.ToolCalls)
			}

			_, body := anthropicUpstreamRequest(t, up)
			var forced *antUpTool
			for i := range body.Tools {
				if body.Tools[i].Name == "json_tool_call" {
					forced = &body.Tools[i]
				}
			}
			if forced == nil {
				t.Fatalf("upstream tools: got %s, want a json_tool_call tool", body.raw["tools"])
			}
			wantSchema, _ := json.Marshal(schema)
			assertSameJSON(t, "json_tool_call input_schema", forced.InputSchema, wantSchema)
			if tc := body.ToolChoice; tc == nil || tc.Type != "tool" || tc.Name != "json_tool_call" {
				t.Errorf("upstream tool_choice: got %s, want {type:tool, name:json_tool_call}", body.raw["tool_choice"])
			}
			if v, ok := body.raw["response_format"]; ok {
				t.Errorf("upstream body has OpenAI member response_format: %s", v)
			}
		})
	}
}

func TestTranslateOpenAIClientDroppedParams(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(modeName(streaming), func(t *testing.T) {
			t.Parallel()
			rep := upstreamtest.Reply{Body: antMessage(`[{"type":"text","text":"ok"}]`, "end_turn", antUsage(9, 0, 1))}
			if streaming {
				rep = upstreamtest.Reply{Gap: eventGap, Events: events(one(antMessageStart(antUsage(9, 0, 1))), antTextBlock(0, "ok"), antMessageEnd("end_turn", 1))}
			}
			up := staticUpstream(t, rep)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			var httpResp *http.Response
			// seed and frequency_penalty are advisory; Anthropic has neither.
			res, _ := askOpenAI(t, client, openai.ChatCompletionNewParams{
				Model: "claude-test", Messages: userOnly("hi"), Seed: openai.Int(42), FrequencyPenalty: openai.Float(0.5),
				Temperature: openai.Float(1.7), // above Anthropic's range: clamped and reported (T03)
			}, streaming, option.WithResponseInto(&httpResp))
			if got := res.Choices[0].Message.Content; got != "ok" {
				t.Errorf("answer: got %q, want ok", got)
			}
			if httpResp == nil {
				t.Fatalf("no HTTP response captured")
			}
			header := httpResp.Header.Get("Tollgate-Dropped-Params")
			dropped := strings.Split(header, ",")
			for _, p := range []string{"seed", "frequency_penalty"} {
				if !slices.Contains(dropped, p) {
					t.Errorf("tollgate-dropped-params: got %q, want it to list %s", header, p)
				}
			}
			if got := httpResp.Header.Get("Tollgate-Adjusted-Params"); !slices.Contains(strings.Split(got, ","), "temperature") {
				t.Errorf("tollgate-adjusted-params: got %q, want it to list temperature", got)
			}
			_, body := anthropicUpstreamRequest(t, up)
			for _, k := range []string{"seed", "frequency_penalty"} {
				if v, ok := body.raw[k]; ok {
					t.Errorf("upstream %s: got %s, want it dropped", k, v)
				}
			}
			if p := body.Temperature; p == nil || *p != 1 {
				t.Errorf("upstream temperature: got %s, want 1 (clamped from 1.7)", body.raw["temperature"])
			}
		})
	}
}

func TestTranslateOpenAIClientRefusedParams(t *testing.T) {
	t.Parallel()
	// Parameters whose loss would change what the client reads are refused
	// before any upstream call (TRANSLATION.md P2, §1.11, T04).
	for _, tc := range []struct {
		name   string
		params openai.ChatCompletionNewParams
		param  string // the offending parameter, named in the message
	}{
		{"n=2", openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("hi"), N: openai.Int(2)}, "n"},
		{"logprobs", openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("hi"), Logprobs: openai.Bool(true)}, "logprobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := unusedUpstream(t)
			base := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(base)
			res, err := client.Chat.Completions.New(callContext(t), tc.params)
			if err == nil {
				t.Fatalf("got completion %s, want a 400", res.RawJSON())
			}
			apiErr := openAIError(t, err, http.StatusBadRequest)
			if apiErr.Type != "invalid_request_error" {
				t.Errorf("error type: got %q, want invalid_request_error", apiErr.Type)
			}
			if !strings.Contains(apiErr.Message, tc.param) {
				t.Errorf("error message: got %q, want it to name %s", apiErr.Message, tc.param)
			}
			noRequests(t, up)
		})
	}
}

func TestTranslateOpenAIClientRequestShapes(t *testing.T) {
	t.Parallel()
	withTools := func(p openai.ChatCompletionNewParams) openai.ChatCompletionNewParams {
		p.Tools = []openai.ChatCompletionToolUnionParam{getWeatherFunction()}
		return p
	}
	base := openai.ChatCompletionNewParams{Model: "claude-test", Messages: userOnly("Weather in Paris?")}
	hash := sha256.Sum256([]byte("alice@example.com"))
	for _, tc := range []struct {
		name    string
		params  openai.ChatCompletionNewParams
		check   func(t *testing.T, body messagesUpstreamBody)
		dropped []string
	}{
		{name: "system and developer hoisted (T01)",
			params: openai.ChatCompletionNewParams{Model: "claude-test", Messages: []openai.ChatCompletionMessageParamUnion{
				openai.SystemMessage("A"), openai.UserMessage("hi"), openai.DeveloperMessage("B"), openai.UserMessage("x"),
			}},
			check: func(t *testing.T, body messagesUpstreamBody) {
				var sys []string
				for _, b := range antBlocks(t, "system", body.System) {
					sys = append(sys, b.Text)
				}
				if !slices.Equal(sys, []string{"A", "B"}) {
					t.Errorf("system: got %s, want blocks A and B", body.System)
				}
				if len(body.Messages) != 1 || body.Messages[0].Role != "user" {
					t.Fatalf("messages: got %s, want one merged user message", body.raw["messages"])
				}
				var texts []string
				for _, b := range antBlocks(t, "user content", body.Messages[0].Content) {
					texts = append(texts, b.Text)
				}
				if !slices.Equal(texts, []string{"hi", "x"}) {
					t.Errorf("user content: got %s, want text blocks hi and x", body.Messages[0].Content)
				}
			}},
		{name: "required without parallel calls (T09)",
			params: func() openai.ChatCompletionNewParams {
				p := withTools(base)
				p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
				p.ParallelToolCalls = openai.Bool(false)
				return p
			}(),
			check: func(t *testing.T, body messagesUpstreamBody) {
				assertSameJSON(t, "tool_choice", body.raw["tool_choice"], []byte(`{"type":"any","disable_parallel_tool_use":true}`))
			}},
		{name: "parallel_tool_calls false alone (T09)",
			params: func() openai.ChatCompletionNewParams {
				p := withTools(base)
				p.ParallelToolCalls = openai.Bool(false)
				return p
			}(),
			check: func(t *testing.T, body messagesUpstreamBody) {
				assertSameJSON(t, "tool_choice", body.raw["tool_choice"], []byte(`{"type":"auto","disable_parallel_tool_use":true}`))
			}},
		{name: "tool_choice none keeps tools (T09)",
			params: func() openai.ChatCompletionNewParams {
				p := withTools(base)
				p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
				return p
			}(),
			check: func(t *testing.T, body messagesUpstreamBody) {
				assertSameJSON(t, "tool_choice", body.raw["tool_choice"], []byte(`{"type":"none"}`))
				if len(body.Tools) != 1 {
					t.Errorf("tools: got %s, want get_weather kept", body.raw["tools"])
				}
			}},
		{name: "named tool",
			params: func() openai.ChatCompletionNewParams {
				p := withTools(base)
				p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"})
				return p
			}(),
			check: func(t *testing.T, body messagesUpstreamBody) {
				assertSameJSON(t, "tool_choice", body.raw["tool_choice"], []byte(`{"type":"tool","name":"get_weather"}`))
			}},
		{name: "stop sequences (T05)",
			params: func() openai.ChatCompletionNewParams {
				p := base
				p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END", " "}}
				return p
			}(),
			check: func(t *testing.T, body messagesUpstreamBody) {
				assertSameJSON(t, "stop_sequences", body.raw["stop_sequences"], []byte(`["END"]`))
			}},
		{name: "whitespace stop (T05)",
			params: func() openai.ChatCompletionNewParams {
				p := base
				p.Stop = openai.ChatCompletionNewParamsStopUnion{OfString: openai.String("\n")}
				return p
			}(),
			check: func(t *testing.T, body messagesUpstreamBody) {
				if v, ok := body.raw["stop_sequences"]; ok {
					t.Errorf("stop_sequences: got %s, want none", v)
				}
			},
			dropped: []string{"stop"}},
		{name: "default max_tokens (T02)",
			params: base,
			check: func(t *testing.T, body messagesUpstreamBody) {
				if body.MaxTokens != 8192 {
					t.Errorf("max_tokens: got %d, want the default 8192", body.MaxTokens)
				}
			}},
		{name: "e-mail user id hashed (§1.10)",
			params: func() openai.ChatCompletionNewParams {
				p := base
				p.User = openai.String("alice@example.com")
				return p
			}(),
			check: func(t *testing.T, body messagesUpstreamBody) {
				assertSameJSON(t, "metadata", body.raw["metadata"], []byte(`{"user_id":"`+hex.EncodeToString(hash[:])+`"}`))
			}},
		{name: "opaque user id",
			params: func() openai.ChatCompletionNewParams {
				p := base
				p.SafetyIdentifier = openai.String("user-7f3a9c")
				return p
			}(),
			check: func(t *testing.T, body messagesUpstreamBody) {
				assertSameJSON(t, "metadata", body.raw["metadata"], []byte(`{"user_id":"user-7f3a9c"}`))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := staticUpstream(t, upstreamtest.Reply{Body: antMessage(`[{"type":"text","text":"ok"}]`, "end_turn", antUsage(20, 0, 1))})
			gw := startGateway(t, up, unusedUpstream(t))
			client := openAIClient(gw)
			var httpResp *http.Response
			if _, err := client.Chat.Completions.New(callContext(t), tc.params, option.WithResponseInto(&httpResp)); err != nil {
				t.Fatalf("Chat.Completions.New: %v", err)
			}
			_, body := anthropicUpstreamRequest(t, up)
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
