package translate

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/sse"
)

// Claude's thinking reaches a Responses client as reasoning items; when the
// client sends them back, Claude gets its own blocks again, signature and
// redacted data intact, in their place before the turn's text and calls.
func TestResponsesReasoningRoundTrip(t *testing.T) {
	thinking := anthropic.Block{Type: "thinking", Thinking: "Line one.\n\"Quoted\" — ünïcödé", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h+/="}
	redacted := anthropic.Block{Type: "redacted_thinking", Data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pLmN0kUdEgf"}
	answer := anthropic.Response{ID: "msg_1", Type: "message", Role: "assistant", Model: "claude",
		Content: []anthropic.Block{thinking, redacted, {Type: "text", Text: "Running it."},
			{Type: "tool_use", ID: "toolu_01A", Name: "exec_command", Input: jsontext.Value(`{"cmd":"ls"}`)}},
		StopReason: new(string), Usage: jsontext.Value(`{"input_tokens":10,"output_tokens":20}`)}
	*answer.StopReason = "tool_use"

	stream := func(t *testing.T, p *Plan) []responses.Item {
		// The same answer as Anthropic streams it.
		var up []byte
		ev := func(name, data string) { up = sse.AppendEvent(up, name, []byte(data)) }
		ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Line one.\n\"Quoted\""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" — ünïcödé"}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h+/="}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"`+redacted.Data+`"}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
		ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Running it."}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":2}`)
		ev("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_01A","name":"exec_command","input":{}}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":\"ls\"}"}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":3}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}`)
		ev("message_stop", `{"type":"message_stop"}`)
		got := translateStream(t, goldenPairs["r2m"], up, p, 5)
		checkResponsesGrammar(t, got)
		var final responses.Response
		for _, e := range events(got) {
			if string(e.Name) == "response.completed" {
				if err := jsonx.Unmarshal([]byte(gjson.GetBytes(e.Data, "response").Raw), &final); err != nil {
					t.Fatal(err)
				}
			}
		}
		return final.Output
	}
	for name, answerItems := range map[string]func(*testing.T, *Plan) []responses.Item{
		"whole": func(t *testing.T, p *Plan) []responses.Item {
			r, _ := MessagesResponseToResponses(&answer, p, goldenCreated)
			return r.Output
		},
		"stream": stream,
	} {
		t.Run(name, func(t *testing.T) {
			_, p, err := ResponsesToMessages(&responses.Request{Model: "m", Input: responses.Input{IsString: true, Text: "hi"}}, "u", Caps{}, PolicyDefault, goldenSigner)
			if err != nil {
				t.Fatal(err)
			}
			items := answerItems(t, p)
			if len(items) != 4 || items[0].Type != "reasoning" || items[1].Type != "reasoning" || items[2].Type != "message" || items[3].Type != "function_call" {
				t.Fatalf("output items: %s", mustJSON(items))
			}
			if s := items[0].Summary; len(s) != 1 || s[0].Text != thinking.Thinking {
				t.Errorf("summary %+v", s)
			}
			// The next turn sends the items back, with the call's output.
			next := &responses.Request{Model: "m", Input: responses.Input{Items: append([]responses.Item{{Role: "user", Content: responses.Content{IsString: true, Text: "list"}}}, items...)}}
			next.Input.Items = append(next.Input.Items, responses.Item{Type: "function_call_output", CallID: items[3].CallID, Output: responses.Content{IsString: true, Text: "a b"}})
			req, _, err := ResponsesToMessages(next, "u", Caps{}, PolicyDefault, goldenSigner)
			if err != nil {
				t.Fatal(err)
			}
			if len(req.Messages) != 3 || req.Messages[1].Role != "assistant" {
				t.Fatalf("messages: %s", mustJSON(req.Messages))
			}
			want := mustJSON([]anthropic.Block{thinking, redacted, {Type: "text", Text: "Running it."},
				{Type: "tool_use", ID: "toolu_01A", Name: "exec_command", Input: jsontext.Value(`{"cmd":"ls"}`)}})
			if got := mustJSON(req.Messages[1].Content.Blocks); string(got) != string(want) {
				t.Errorf("assistant turn sent back:\n got %s\nwant %s", got, want)
			}
			// Another gateway's key cannot be used to smuggle blocks in.
			other := NewSigner([]byte("another key"))
			if _, ok := other.unseal(*items[0].EncryptedContent); ok {
				t.Error("a value sealed with one key unseals with another")
			}
		})
	}
}

// A Responses upstream's reasoning reaches an Anthropic client as a
// thinking block whose signature seals the reasoning item; when the client
// sends the block back, the upstream gets its item again, encrypted
// content intact.
func TestAnthropicClientReasoningRoundTrip(t *testing.T) {
	body := []byte(`{"id":"resp_1","object":"response","status":"completed","output":[
		{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Plan."}],"encrypted_content":"gAAAA-opaque=="},
		{"id":"rs_2","type":"reasoning","summary":[],"encrypted_content":"gAAAA-hidden=="},
		{"id":"fc_1","type":"function_call","call_id":"call_1","name":"Bash","arguments":"{\"command\":\"ls\"}"}],
		"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}`)
	in := &anthropic.MessagesRequest{Model: "m", MaxTokens: 100, Messages: []anthropic.Message{{Role: "user", Content: anthropic.Content{Blocks: []anthropic.Block{{Type: "text", Text: "hi"}}}}}}
	_, p, err := MessagesRequestToResponses(in, "u", Caps{}, PolicyDefault, goldenSigner)
	if err != nil {
		t.Fatal(err)
	}
	out, _, _, err := ResponsesAnswerToMessages(body, p, goldenCreated)
	if err != nil {
		t.Fatal(err)
	}
	var msg anthropic.Response
	if err := jsonx.Unmarshal(out, &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 3 || msg.Content[0].Type != "thinking" || msg.Content[0].Thinking != "Plan." || msg.Content[1].Type != "redacted_thinking" {
		t.Fatalf("content: %s", out)
	}
	next := *in
	next.Messages = append(next.Messages, anthropic.Message{Role: "assistant", Content: anthropic.Content{Blocks: msg.Content}},
		anthropic.Message{Role: "user", Content: anthropic.Content{Blocks: []anthropic.Block{{Type: "tool_result", ToolUseID: "call_1", Content: &anthropic.Content{FromString: true, Blocks: []anthropic.Block{{Type: "text", Text: "a b"}}}}}}})
	req, _, err := MessagesRequestToResponses(&next, "u", Caps{}, PolicyDefault, goldenSigner)
	if err != nil {
		t.Fatal(err)
	}
	got := string(mustJSON(req.Input.Items[1:]))
	want := `[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Plan."}],"encrypted_content":"gAAAA-opaque=="},` +
		`{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAA-hidden=="},` +
		`{"type":"function_call","call_id":"call_1","name":"Bash","arguments":"{\"command\":\"ls\"}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"a b"}]`
	if got != want {
		t.Errorf("items sent back:\n got %s\nwant %s", got, want)
	}
	// A thinking block Claude made (or a forged one) is not the upstream's.
	forged := next
	forged.Messages = append([]anthropic.Message(nil), next.Messages...)
	forged.Messages[1] = anthropic.Message{Role: "assistant", Content: anthropic.Content{Blocks: []anthropic.Block{{Type: "thinking", Thinking: "x", Signature: "EqQBCgIYAhIM"}, msg.Content[2]}}}
	req, _, err = MessagesRequestToResponses(&forged, "u", Caps{}, PolicyDefault, goldenSigner)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(mustJSON(req.Input.Items)); strings.Contains(s, `"reasoning"`) {
		t.Errorf("a thinking block not sealed by tollgate reached the upstream: %s", s)
	}
}
