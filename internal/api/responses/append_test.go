package responses

import (
	"bytes"
	"math"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/jsonx"
)

func ptr[T any](v T) *T { return &v }

// appendCases are responses in every shape the gateway writes, and the
// odd ones a client's request can put into them.
func appendCases() []Response {
	full := Response{
		ID: "resp_1", Object: "response", CreatedAt: 1700000000, Status: StatusCompleted,
		CompletedAt: ptr(int64(1700000001)), Instructions: ptr("Be brief.\n\"quoted\" <b>"),
		MaxOutputTokens: ptr(int64(512)), Model: "claude-x", ParallelToolCalls: true,
		PreviousResponseID: ptr("resp_0"), Reasoning: &Reasoning{Effort: "high", Summary: "auto"},
		Store: true, Temperature: 0.7, TopP: 1, Truncation: "disabled",
		Text:       &Text{Format: &Format{Type: "json_schema", Name: "out", Schema: jsontext.Value(`{ "type" : "object" }`), Strict: ptr(true), Description: "d"}, Verbosity: "low"},
		ToolChoice: jsontext.Value(` { "type": "function", "name": "f" } `),
		Tools: []Tool{
			{Type: "function", Name: "f", Description: "does f", Parameters: jsontext.Value(`{"type":"object","properties":{}}`), Strict: ptr(false)},
			{Type: "custom", Name: "g", Format: jsontext.Value(`{"type":"text"}`)},
			{Type: "namespace", Name: "ns", Tools: []Tool{{Type: "function", Name: "h"}}},
			{Type: "web_search", Extra: jsontext.Value(`{"filters": {"allowed_domains":["a.com"]}, "search_context_size":"low"}`)},
			{Type: "x", Extra: jsontext.Value(`{ }`)},
		},
		Usage: &Usage{InputTokens: 10, InputTokensDetails: InputTokensDetails{CachedTokens: 4, CacheWriteTokens: 2},
			OutputTokens: 7, OutputTokensDetails: OutputTokensDetails{ReasoningTokens: 3}, TotalTokens: 17},
		User: ptr("u"), Metadata: jsontext.Value(`{"a":"b"}`),
		Output: []Item{
			{Type: "reasoning", ID: "rs_1", Status: "completed", Summary: []Part{{Type: "summary_text", Text: "think\u2028"}}, EncryptedContent: ptr("sealed")},
			{Type: "reasoning", ID: "rs_2", Summary: []Part{}, EncryptedContent: ptr("")},
			{Type: "message", ID: "msg_1", Status: "completed", Role: "assistant", Content: Content{Parts: []Part{{Type: "output_text", Text: "hi\x00\xff", Annot: jsontext.Value(`[]`)}, {Type: "refusal", Refusal: "no"}}}},
			{Type: "function_call", ID: "fc_1", CallID: "call_1", Name: "f", Namespace: "ns", Arguments: ptr("")},
			{Type: "custom_tool_call", ID: "ctc_1", CallID: "call_2", Name: "g", Input: ptr("raw")},
			{Type: "function_call_output", CallID: "call_1", Output: Content{IsString: true, Text: "42"}},
			{Type: "function_call_output", CallID: "call_3", Output: Content{Null: true}},
			{Type: "web_search_call", ID: "ws_1", Status: "completed", Extra: jsontext.Value(`{"action":{"type":"search","query":"q"}}`)},
			{Extra: jsontext.Value(`{"only":1}`)},
			{Role: "user", Content: Content{IsString: true, Text: ""}, Phase: "final_answer"},
			{Type: "message", Content: Content{Parts: []Part{{Type: "input_image", ImageURL: "data:x", Detail: "auto", FileID: "f", FileData: "d", FileURL: "u", Filename: "n", Extra: jsontext.Value(`{"k": [1, 2]}`)}}}},
		},
	}
	failed := Response{ID: "resp_2", Object: "response", Status: StatusFailed, Error: &Error{Code: "server_error", Message: "boom"},
		IncompleteDetails: &Incomplete{Reason: "max_output_tokens"}, Temperature: 1e-7, TopP: 1e21,
		ToolChoice: jsontext.Value(`"auto"`), Metadata: jsontext.Value(`{}`)}
	bare := Response{ToolChoice: jsontext.Value(`"none"`), Metadata: jsontext.Value(`null`), Reasoning: &Reasoning{Extra: jsontext.Value(`{"x":true}`)},
		Text: &Text{}, Temperature: math.Copysign(0, -1), TopP: 123456789.125}
	absent := Response{} // tool_choice and metadata left empty: written as null
	return []Response{full, failed, bare, absent}
}

func TestAppendJSONMatchesMarshal(t *testing.T) {
	for i, r := range appendCases() {
		want, err := jsonx.Marshal(r)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got := r.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
		for j := range r.Output {
			want, _ := jsonx.Marshal(r.Output[j])
			if got := r.Output[j].AppendJSON([]byte("x")); !bytes.Equal(got[1:], want) {
				t.Errorf("case %d item %d:\n got %s\nwant %s", i, j, got[1:], want)
			}
		}
	}
}

// FuzzAppendJSON decodes a response from arbitrary JSON and checks that
// both encoders write the same bytes for it.
func FuzzAppendJSON(f *testing.F) {
	for _, r := range appendCases() {
		b, _ := jsonx.Marshal(r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Response
		if jsonx.Unmarshal(data, &r) != nil {
			return
		}
		want, err := jsonx.Marshal(r)
		if err != nil {
			return
		}
		if got := r.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkResponseEncode(b *testing.B) {
	r := appendCases()[0]
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = jsonx.Marshal(r)
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = r.AppendJSON(buf[:0])
		}
	})
}
