package translate

import (
	"math"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// sameEncoding checks that encode writes what jsonx.Marshal writes for
// v, or fails as it fails, and reports whether the hand-written encoder
// hand took v.
func sameEncoding[T any](t *testing.T, v *T, encode func(*T) ([]byte, error), hand func([]byte, *T) ([]byte, bool)) bool {
	t.Helper()
	want, wantErr := jsonx.Marshal(v)
	got, gotErr := encode(v)
	switch {
	case (gotErr == nil) != (wantErr == nil):
		t.Fatalf("%#v: error %v, jsonx.Marshal's %v", v, gotErr, wantErr)
	case gotErr != nil && gotErr.Error() != wantErr.Error():
		t.Fatalf("%#v: error\n%v\njsonx.Marshal's\n%v", v, gotErr, wantErr)
	case string(got) != string(want):
		t.Fatalf("%#v:\n%s\njsonx.Marshal's\n%s", v, got, want)
	}
	_, took := hand(nil, v)
	if took && wantErr != nil {
		t.Fatalf("%#v: encoded by hand, but jsonx.Marshal says %v", v, wantErr)
	}
	return took
}

func TestEncodeCompletionMatchesMarshal(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name string
		c    openai.Completion
		hand bool
	}{
		{"zero", openai.Completion{}, true},
		{"text", openai.Completion{ID: "chatcmpl-1", Object: "chat.completion", Created: 7, Model: "m <&>",
			Choices: []openai.Choice{{Message: openai.ChatMessage{Role: "assistant", Content: openai.MessageContent{IsString: true, Text: "hi \u2028 \"q\" \xff"},
				Refusal: str(""), ReasoningContent: "r"}, Logprobs: jsontext.Value("null"), FinishReason: str("stop")}},
			Usage: jsontext.Value(`{"prompt_tokens":1}`), SystemFingerprint: str("fp")}, true},
		{"tool calls", openai.Completion{Choices: []openai.Choice{{Index: 1, Message: openai.ChatMessage{Role: "assistant", Content: openai.MessageContent{Null: true},
			Name: "n", ToolCallID: "x", Refusal: str("no"), Reasoning: "q", ReasoningSig: "s",
			ToolCalls:      []openai.ToolCall{{ID: "c", Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: `{"a":1}`}}, {}},
			FunctionCall:   &openai.FunctionCall{},
			ThinkingBlocks: []openai.ThinkingBlock{{Type: "thinking", Thinking: "t", Signature: "s"}, {Type: "redacted_thinking", Data: "d"}, {}}}}}}, true},
		{"empty lists", openai.Completion{Choices: []openai.Choice{{Message: openai.ChatMessage{ToolCalls: []openai.ToolCall{}, ThinkingBlocks: []openai.ThinkingBlock{}}}}}, true},
		{"raw values reformatted", openai.Completion{Choices: []openai.Choice{{Logprobs: jsontext.Value(` { "a" : [ 1 , "\u00e9\/" ] } `)}}, Usage: jsontext.Value("{\"x\":\"\xff\"}")}, true},
		{"raw value duplicate", openai.Completion{Usage: jsontext.Value(`{"a":1,"a":2}`)}, false},
		{"raw value invalid", openai.Completion{Usage: jsontext.Value(`{`)}, false},
		{"raw value empty", openai.Completion{Usage: jsontext.Value{}}, false},
		{"logprobs empty", openai.Completion{Choices: []openai.Choice{{Logprobs: jsontext.Value{}}}}, false},
		{"parts", openai.Completion{Choices: []openai.Choice{{Message: openai.ChatMessage{Content: openai.MessageContent{Parts: []openai.Part{{Type: "text", Text: "t"}}}}}}}, true},
		{"part extra", openai.Completion{Choices: []openai.Choice{{Message: openai.ChatMessage{Content: openai.MessageContent{Parts: []openai.Part{{Type: "text", Extra: jsontext.Value(`{"x":1}`)}}}}}}}, false},
		{"extra", openai.Completion{Choices: []openai.Choice{{Message: openai.ChatMessage{Extra: jsontext.Value(`{"annotations":[]}`)}}}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sameEncoding(t, &c.c, encodeCompletion, appendCompletion); got != c.hand {
				t.Errorf("encoded by hand: %v, want %v", got, c.hand)
			}
		})
	}
}

// FuzzEncodeCompletion: whatever a Chat upstream's answer holds, the
// hand-written encoder writes it as jsonx.Marshal does.
func FuzzEncodeCompletion(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var c openai.Completion
		if jsonx.Unmarshal(body, &c) != nil {
			return
		}
		sameEncoding(t, &c, encodeCompletion, appendCompletion)
	})
}

func TestEncodeOpenAIUsageMatchesMarshal(t *testing.T) {
	for _, u := range []meter.Usage{
		{},
		{Input: 10, Output: 5},
		{Input: 1, CacheRead: 2, CacheWrite5m: 3, CacheWrite1h: 4, Output: 5, Reasoning: 6},
		{Input: -1, Output: -9223372036854775808, Reasoning: -1},
	} {
		want, err := jsonx.Marshal(openAIUsage(u))
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeOpenAIUsage(u); string(got) != string(want) {
			t.Errorf("%+v:\n%s\njsonx.Marshal's\n%s", u, got, want)
		}
	}
}

func TestEncodeMessagesMatchesMarshal(t *testing.T) {
	num := func(f float64) *float64 { return &f }
	yes, no := true, false
	k := int64(5)
	str := func(s string) *string { return &s }
	text := func(s string) anthropic.Block { return anthropic.Block{Type: "text", Text: s} }
	for _, c := range []struct {
		name string
		v    anthropic.MessagesRequest
		hand bool
	}{
		{"zero", anthropic.MessagesRequest{}, true},
		{"full", anthropic.MessagesRequest{Model: "m", MaxTokens: 100,
			System: anthropic.Content{Blocks: []anthropic.Block{{Type: "text", Text: "s", CacheControl: jsontext.Value(`{"type":"ephemeral"}`)}}},
			Messages: []anthropic.Message{
				{Role: "user", Content: anthropic.Content{Blocks: []anthropic.Block{text("hi \xff <>")}, FromString: true}, CacheControl: jsontext.Value(`{ "type" : "ephemeral" }`)},
				{Role: "assistant", Content: anthropic.Content{Blocks: []anthropic.Block{
					{Type: "thinking", Signature: "sig"}, {Type: "thinking", Thinking: "t", Signature: "s"}, {Type: "redacted_thinking", Data: "d"},
					text(""), {Type: "text", Text: "a", Citations: jsontext.Value(`[]`)},
					{Type: "tool_use", ID: "i", Name: "n", Input: jsontext.Value(`{"a": 1}`)}}}},
				{Role: "user", Content: anthropic.Content{Blocks: []anthropic.Block{
					{Type: "tool_result", ToolUseID: "i", Content: &anthropic.Content{Blocks: []anthropic.Block{text("r")}}, IsError: true},
					{Type: "tool_result", ToolUseID: "j", Content: &anthropic.Content{}},
					{Type: "tool_result", ToolUseID: "k", Content: &anthropic.Content{Blocks: []anthropic.Block{text("")}, FromString: true}},
					{Type: "tool_result", ToolUseID: "l", Content: &anthropic.Content{Raw: jsontext.Value(`{ }`)}},
					{Type: "web_search_tool_result", ToolUseID: "m", Content: &anthropic.Content{Raw: jsontext.Value(`{"type":"x"}`)}},
					{Type: "search_result", Title: "t"}}}},
				{Role: "user", Content: anthropic.Content{Blocks: []anthropic.Block{}}},
				{Role: "user", Content: anthropic.Content{Raw: jsontext.Value(`null`)}},
			},
			StopSequences: []string{"x", "y"}, Stream: true, Temperature: num(0.7), TopP: num(1e-7), TopK: &k,
			Metadata: &anthropic.Metadata{UserID: "u"},
			Tools: []anthropic.Tool{{Name: "t", Description: "d", InputSchema: jsontext.Value(`{"type":"object"}`), Strict: &yes, CacheControl: jsontext.Value(`{}`),
				DeferLoading: true, InputExamples: jsontext.Value(`[{}]`), AllowedCallers: []string{"a"}, EagerInputStreaming: &no},
				{Type: "web_search_20250305", Name: "web_search"}},
			ToolChoice:   &anthropic.ToolChoice{Type: "tool", Name: "t", DisableParallelToolUse: true},
			Thinking:     &anthropic.Thinking{Type: "enabled", BudgetTokens: 1024},
			OutputConfig: &anthropic.OutputConfig{Format: jsontext.Value(`{"type":"json_schema"}`)},
			OutputFormat: jsontext.Value(`null`), ServiceTier: "auto", MCPServers: jsontext.Value(`[]`), Container: jsontext.Value(`"c"`),
			ContextMgmt: jsontext.Value(`{}`), CacheControl: jsontext.Value(`{"type":"ephemeral"}`), InferenceGeo: "us"}, true},
		{"empty objects omitted", anthropic.MessagesRequest{Metadata: &anthropic.Metadata{}, OutputConfig: &anthropic.OutputConfig{}, Thinking: &anthropic.Thinking{}, ToolChoice: &anthropic.ToolChoice{},
			StopSequences: []string{}, Tools: []anthropic.Tool{}, Temperature: num(0), System: anthropic.Content{Blocks: []anthropic.Block{}}}, true},
		{"effort", anthropic.MessagesRequest{OutputConfig: &anthropic.OutputConfig{Effort: "low"}}, true},
		{"system string", anthropic.MessagesRequest{System: anthropic.Content{Blocks: []anthropic.Block{text("s")}, FromString: true}}, true},
		{"numbers", anthropic.MessagesRequest{Temperature: num(1e21), TopP: num(-0.000001), MaxTokens: -1}, true},
		{"not a number", anthropic.MessagesRequest{Temperature: num(math.NaN())}, false},
		{"infinite", anthropic.MessagesRequest{TopP: num(math.Inf(-1))}, false},
		{"raw duplicate", anthropic.MessagesRequest{Container: jsontext.Value(`{"a":1,"a":1}`)}, false},
		{"extra", anthropic.MessagesRequest{Extra: jsontext.Value(`{"x":1}`)}, false},
		{"message extra", anthropic.MessagesRequest{Messages: []anthropic.Message{{Extra: jsontext.Value(`{"x":1}`)}}}, false},
		{"tool extra", anthropic.MessagesRequest{Tools: []anthropic.Tool{{Extra: jsontext.Value(`{"x":1}`)}}}, false},
		{"thinking extra", anthropic.MessagesRequest{Thinking: &anthropic.Thinking{Extra: jsontext.Value(`{"x":1}`)}}, false},
		{"source", anthropic.MessagesRequest{Messages: []anthropic.Message{{Content: anthropic.Content{Blocks: []anthropic.Block{{Type: "image", Source: &anthropic.Source{Type: "url", URL: "u"}}}}}}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sameEncoding(t, &c.v, encodeMessagesRequest, appendMessagesRequest); got != c.hand {
				t.Errorf("encoded by hand: %v, want %v", got, c.hand)
			}
		})
	}
	for _, c := range []struct {
		name string
		v    anthropic.Response
		hand bool
	}{
		{"zero", anthropic.Response{}, true},
		{"answer", anthropic.Response{ID: "msg", Type: "message", Role: "assistant", Model: "m", Content: []anthropic.Block{{Type: "thinking", Signature: "s"}, text("hi"), {Type: "tool_use", ID: "t", Name: "n", Input: jsontext.Value(`{}`)}},
			StopReason: str("tool_use"), Usage: jsontext.Value(`{"input_tokens":1,"output_tokens":2}`)}, true},
		{"usage invalid", anthropic.Response{Usage: jsontext.Value(`{"a"}`)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sameEncoding(t, &c.v, encodeMessagesResponse, appendMessagesResponse); got != c.hand {
				t.Errorf("encoded by hand: %v, want %v", got, c.hand)
			}
		})
	}
}

// FuzzEncodeMessagesRequest: whatever a Messages request holds, the
// hand-written encoder writes it as jsonx.Marshal does.
func FuzzEncodeMessagesRequest(f *testing.F) {
	seedBodies(f, string(anthropicBody(1<<10)))
	f.Fuzz(func(t *testing.T, body []byte) {
		var v anthropic.MessagesRequest
		if jsonx.Unmarshal(body, &v) != nil {
			return
		}
		sameEncoding(t, &v, encodeMessagesRequest, appendMessagesRequest)
	})
}

// FuzzEncodeMessagesResponse is the same for Messages answers.
func FuzzEncodeMessagesResponse(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var v anthropic.Response
		if jsonx.Unmarshal(body, &v) != nil {
			return
		}
		sameEncoding(t, &v, encodeMessagesResponse, appendMessagesResponse)
	})
}

func TestEncodeChatRequestMatchesMarshal(t *testing.T) {
	num := func(f float64) *float64 { return &f }
	n := func(i int64) *int64 { return &i }
	yes, no := true, false
	for _, c := range []struct {
		name string
		v    openai.ChatRequest
		hand bool
	}{
		{"zero", openai.ChatRequest{}, true},
		{"full", openai.ChatRequest{Model: "m", Messages: []openai.ChatMessage{
			{Role: "system", Content: openai.MessageContent{IsString: true, Text: "s"}},
			{Role: "user", Content: openai.MessageContent{Parts: []openai.Part{
				{Type: "text", Text: "t", CacheControl: jsontext.Value(`{"type": "ephemeral"}`)},
				{Type: "image_url", ImageURL: &openai.ImageURL{URL: "u", Detail: "low"}},
				{Type: "image_url", ImageURL: &openai.ImageURL{}},
				{Type: "file", File: &openai.File{FileID: "f", Filename: "a.pdf"}},
				{Type: "file", File: &openai.File{}},
				{Type: "file", File: &openai.File{FileData: "d"}},
				{Type: "input_audio", InputAudio: jsontext.Value(`{"data":"x","format":"wav"}`)},
				{Type: "refusal", Refusal: "no"}}}},
			{Role: "user", Content: openai.MessageContent{Parts: []openai.Part{}}},
			{Role: "assistant", Content: openai.MessageContent{Null: true}, ToolCalls: []openai.ToolCall{{ID: "c", Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: "{}"}}}},
			{Role: "tool", ToolCallID: "c", Content: openai.MessageContent{IsString: true}},
			{Role: "user"},
		}, MaxTokens: n(10), MaxCompletionTokens: n(0), Stream: true, StreamOptions: &openai.StreamOptions{}, Temperature: num(0.25), TopP: num(1), TopK: n(3),
			Stop: openai.Strings{Values: []string{"a"}, Set: true}, N: n(1), Logprobs: &no, TopLogprobs: n(2), User: "u", PromptCacheKey: "k", SafetyIdentifier: "s",
			Tools:      []openai.Tool{{Type: "function", Function: openai.Function{Name: "f", Description: "d", Parameters: jsontext.Value(`{"type":"object"}`), Strict: &yes}}, {Type: "custom"}, {Type: "function", Function: openai.Function{Strict: &no}}},
			ToolChoice: jsontext.Value(`"auto"`), ParallelToolCalls: &yes, Functions: []openai.Function{{Name: "g"}}, FunctionCall: jsontext.Value(`{"name":"g"}`),
			ReasoningEffort: "low", ResponseFormat: jsontext.Value(`{"type":"json_object"}`), Modalities: []string{"text"}, Audio: jsontext.Value(`null`),
			Thinking: jsontext.Value(`{}`), Reasoning: jsontext.Value(`{"effort":"high"}`), EnableThinking: &no}, true},
		{"stop set empty", openai.ChatRequest{Stop: openai.Strings{Set: true}, Modalities: []string{}, Tools: []openai.Tool{}, Functions: []openai.Function{}}, true},
		{"numbers", openai.ChatRequest{Temperature: num(1e-9), TopP: num(123456789012345678)}, true},
		{"not a number", openai.ChatRequest{TopP: num(math.Inf(1))}, false},
		{"extra", openai.ChatRequest{Extra: jsontext.Value(`{"seed":1}`)}, false},
		{"message extra", openai.ChatRequest{Messages: []openai.ChatMessage{{Extra: jsontext.Value(`{"x":1}`)}}}, false},
		{"tool extra", openai.ChatRequest{Tools: []openai.Tool{{Extra: jsontext.Value(`{"x":1}`)}}}, false},
		{"raw invalid", openai.ChatRequest{ToolChoice: jsontext.Value(`{"a":}`)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sameEncoding(t, &c.v, encodeChatRequest, appendChatRequest); got != c.hand {
				t.Errorf("encoded by hand: %v, want %v", got, c.hand)
			}
		})
	}
}

// FuzzEncodeChatRequest: whatever a Chat request holds, the hand-written
// encoder writes it as jsonx.Marshal does.
func FuzzEncodeChatRequest(f *testing.F) {
	seedBodies(f, string(openAIBody(1<<10)))
	f.Fuzz(func(t *testing.T, body []byte) {
		var v openai.ChatRequest
		if jsonx.Unmarshal(body, &v) != nil {
			return
		}
		sameEncoding(t, &v, encodeChatRequest, appendChatRequest)
	})
}
