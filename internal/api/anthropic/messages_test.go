package anthropic

import (
	"testing"

	"github.com/tollgate/tollgate/internal/jsonx"
)

func TestMessagesRequestRoundTrip(t *testing.T) {
	in := `{"model":"m","max_tokens":5,"system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"sig"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"b":1,"a":[2]}},{"type":"future_block","x":1}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":true}]}],"x_vendor":{"k":"v"}}`
	var r MessagesRequest
	if err := jsonx.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if !r.System.FromString || r.System.Blocks[0].Text != "be brief" {
		t.Errorf("system = %+v", r.System)
	}
	if string(r.Extra) != `{"x_vendor":{"k":"v"}}` {
		t.Errorf("Extra = %s, want the unknown member", r.Extra)
	}
	tu := r.Messages[1].Content.Blocks[1]
	if string(tu.Input) != `{"b":1,"a":[2]}` {
		t.Errorf("tool input = %s, want the raw bytes", tu.Input)
	}
	if string(r.Messages[1].Content.Blocks[2].Extra) != `{"x":1}` {
		t.Errorf("unknown block member lost: %s", r.Messages[1].Content.Blocks[2].Extra)
	}
	out, err := jsonx.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	empty, _ := jsonx.Marshal(Message{Role: "user"})
	if string(empty) != `{"role":"user","content":[]}` {
		t.Errorf("empty content = %s", empty)
	}
}

// Shapes current clients send (Claude Code, anthropic-sdk-go v1.84 params)
// decode, and encode back unchanged (members in the order the types give).
func TestMessagesRequestCurrentShapes(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"system message", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"system","content":"be brief","cache_control":{"type":"ephemeral"},"clear_at":"next_user_message"}]}`},
		{"system message blocks", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"system","content":[{"type":"text","text":"a"}],"output_config":{"effort":"low"}}]}`},
		{"search_result", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"search_result","citations":{"enabled":true},"source":"https://example.com/a","title":"T","content":[{"type":"text","text":"a"}]}]}]}`},
		{"search_result in tool_result", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"tool_reference","tool_name":"x"},{"type":"search_result","source":"s","title":"t","content":[{"type":"text","text":"b"}]}]}]}]}`},
		{"web_search_tool_result error", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}]}]}`},
		{"web_fetch_tool_result", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"web_fetch_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"web_fetch_result","url":"u","content":{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"}}}}]}]}`},
		{"code_execution_tool_result", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"code_execution_result","stdout":"","stderr":"","return_code":0,"content":[]}}]}]}`},
		{"mcp blocks", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"mcp_tool_use","id":"mcptoolu_1","name":"n","input":{},"server_name":"s"},{"type":"mcp_tool_result","tool_use_id":"mcptoolu_1","content":[{"type":"text","text":"r"}]}]}]}`},
		{"document with content source", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document","citations":{"enabled":true},"source":{"type":"content","content":[{"type":"text","text":"a"}]},"title":"T","context":"C"}]}]}`},
		{"compaction", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"compaction","content":"summary"}]}]}`},
		{"top level", `{"model":"m","max_tokens":5,"messages":[],"metadata":{"user_id":"u"},"thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"high","task_budget":{"type":"tokens","total":1}},"service_tier":"auto","container":{"id":"c","skills":[]},"speed":"fast"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r MessagesRequest
			if err := jsonx.Unmarshal([]byte(tc.in), &r); err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := jsonx.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.in {
				t.Errorf("round trip:\n got %s\nwant %s", out, tc.in)
			}
		})
	}
}

// A text or thinking block carries its text even when empty: the Messages
// API sends it so, and refuses a thinking block without it.
func TestBlockEmptyText(t *testing.T) {
	for _, tc := range []struct {
		b    Block
		want string
	}{
		{Block{Type: "thinking", Signature: "sig"}, `{"type":"thinking","signature":"sig","thinking":""}`},
		{Block{Type: "text"}, `{"type":"text","text":""}`},
		{Block{Type: "thinking", Thinking: "t", Signature: "sig"}, `{"type":"thinking","thinking":"t","signature":"sig"}`},
		{Block{Type: "tool_use", ID: "toolu_1", Name: "f", Input: []byte(`{}`)}, `{"type":"tool_use","id":"toolu_1","name":"f","input":{}}`},
		{Block{Type: "redacted_thinking", Data: "d"}, `{"type":"redacted_thinking","data":"d"}`},
	} {
		got, err := jsonx.Marshal(tc.b)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.b.Type, got, err, tc.want)
		}
	}
}

// BenchmarkMarshalResponse: a translated whole answer's encoding.
func BenchmarkMarshalResponse(b *testing.B) {
	stop := "tool_use"
	r := Response{ID: "msg_1", Type: "message", Role: "assistant", Model: "m", StopReason: &stop, Usage: []byte(`{"input_tokens":1,"output_tokens":2}`),
		Content: []Block{{Type: "thinking", Thinking: "Let me think about it.", Signature: "sig"}, {Type: "text", Text: "Checking the weather."},
			{Type: "tool_use", ID: "toolu_1", Name: "get_weather", Input: []byte(`{"city":"Paris"}`)}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonx.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}
