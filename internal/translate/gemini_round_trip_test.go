package translate

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/sse"
)

// A Gemini client on a Claude upstream: the thinking Claude signed comes
// back to Claude byte-exact on the next turn, carried only by the
// thoughtSignature of the function call it preceded (Gemini CLI drops
// thought parts from its history), whether the answer came whole or
// streamed.
func TestGeminiThinkingRoundTripOnMessages(t *testing.T) {
	const thinking = `{"type":"thinking","thinking":"The user wants the date; run it.","signature":"EqQBCkYIBxgCKkC+/sig=="}`
	const redacted = `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va=="}`
	answer := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[` + thinking + `,` + redacted +
		`,{"type":"tool_use","id":"toolu_01","name":"run_shell_command","input":{"command":"date"}}],` +
		`"stop_reason":"tool_use","usage":{"input_tokens":20,"output_tokens":30}}`
	stream := messagesEvents(t, answer)

	first := `{"contents":[{"role":"user","parts":[{"text":"what day is it?"}]}],
		"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"type":"object","properties":{"command":{"type":"string"}}}}]}],
		"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"HIGH"}}}`

	for _, streamed := range []bool{false, true} {
		name := map[bool]string{false: "whole", true: "stream"}[streamed]
		t.Run(name, func(t *testing.T) {
			tg := Target{Model: "claude-x", Signer: goldenSigner, Stream: streamed}
			_, p, err := GeminiBodyToMessages(t.Context(), []byte(first), tg)
			if err != nil {
				t.Fatal(err)
			}
			var parts []gjson.Result
			if streamed {
				s := NewMessagesToGeminiStream(p, 0)
				var out []byte
				for _, ev := range stream {
					out = append(out, s.Feed(ev)...)
				}
				tail, clean := s.Close(true, "")
				if !clean {
					t.Fatalf("stream did not end cleanly: %s", tail)
				}
				out = append(out, tail...)
				for _, ev := range bytes.Split(out, []byte("\r\n\r\n")) {
					if d, ok := bytes.CutPrefix(ev, []byte("data: ")); ok {
						parts = append(parts, gjson.GetBytes(d, "candidates.0.content.parts").Array()...)
					}
				}
			} else {
				out, _, _, err := MessagesAnswerToGemini([]byte(answer), p, 0)
				if err != nil {
					t.Fatal(err)
				}
				parts = gjson.GetBytes(out, "candidates.0.content.parts").Array()
			}
			// What Gemini CLI keeps: the function call with its signature.
			var call string
			for _, pt := range parts {
				if pt.Get("functionCall").Exists() {
					call = pt.Raw
				}
			}
			if call == "" || gjson.Get(call, "thoughtSignature").Str == "" {
				t.Fatalf("no function call with a thought signature among %v", parts)
			}
			if id := gjson.Get(call, "functionCall.id").Str; id != "toolu_01" {
				t.Errorf("function call id %q, want the upstream's", id)
			}
			next := `{"contents":[{"role":"user","parts":[{"text":"what day is it?"}]},
				{"role":"model","parts":[` + call + `]},
				{"role":"user","parts":[{"functionResponse":{"id":"toolu_01","name":"run_shell_command","response":{"output":"Fri Nov 27"}}}]}],
				"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"type":"object","properties":{"command":{"type":"string"}}}}]}],
				"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"HIGH"}}}`
			body, _, err := GeminiBodyToMessages(t.Context(), []byte(next), tg)
			if err != nil {
				t.Fatal(err)
			}
			want := `"content":[` + thinking + `,` + redacted + `,{"type":"tool_use","id":"toolu_01","name":"run_shell_command","input":{"command":"date"}}]`
			if !strings.Contains(string(body), want) {
				t.Errorf("the assistant turn does not carry Claude's blocks byte-exact\nwant %s\n got %s", want, body)
			}
			if !strings.Contains(string(body), `"tool_use_id":"toolu_01"`) {
				t.Errorf("the function response does not answer the call: %s", body)
			}
		})
	}
}

// messagesEvents renders a whole Messages answer as the stream Claude
// would have sent, one event per slice.
func messagesEvents(t *testing.T, answer string) [][]byte {
	t.Helper()
	var evs [][]byte
	add := func(name, data string) { evs = append(evs, sse.AppendEvent(nil, name, []byte(data))) }
	add("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":20,"output_tokens":1}}}`)
	for i, b := range gjson.Get(answer, "content").Array() {
		idx := strconv.Itoa(i)
		switch b.Get("type").Str {
		case "thinking":
			add("content_block_start", `{"type":"content_block_start","index":`+idx+`,"content_block":{"type":"thinking","thinking":""}}`)
			add("content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"thinking_delta","thinking":`+b.Get("thinking").Raw+`}}`)
			add("content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"signature_delta","signature":`+b.Get("signature").Raw+`}}`)
		case "redacted_thinking":
			add("content_block_start", `{"type":"content_block_start","index":`+idx+`,"content_block":`+b.Raw+`}`)
		case "tool_use":
			add("content_block_start", `{"type":"content_block_start","index":`+idx+`,"content_block":{"type":"tool_use","id":"toolu_01","name":"run_shell_command","input":{}}}`)
			add("content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"date\"}"}}`)
		}
		add("content_block_stop", `{"type":"content_block_stop","index":`+idx+`}`)
	}
	add("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}`)
	add("message_stop", `{"type":"message_stop"}`)
	return evs
}
