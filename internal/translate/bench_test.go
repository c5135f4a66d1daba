package translate

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// anthropicBody is a realistic Messages request of about size bytes:
// system with cache_control, tools, a tool round trip, and a long turn.
func anthropicBody(size int) []byte {
	base := `{"model":"m","max_tokens":1024,"system":[{"type":"text","text":"You are a coding agent. <rules> & more","cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},` +
		`{"name":"bash","description":"Run a command","input_schema":{"type":"object","properties":{"cmd":{"type":"string"}}}}],` +
		`"messages":[{"role":"user","content":"Fix the bug 🐛"},{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"main.go"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"package main"}]},{"role":"user","content":"`
	tail := `"}]}`
	return []byte(base + strings.Repeat("lorem ipsum ", max(0, size-len(base)-len(tail))/12) + tail)
}

func openAIBody(size int) []byte {
	base := `{"model":"m","max_completion_tokens":1024,"temperature":0.3,"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}],` +
		`"messages":[{"role":"system","content":"You are a coding agent."},{"role":"user","content":"Fix the bug 🐛"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"main.go\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"package main"},{"role":"user","content":"`
	tail := `"}]}`
	return []byte(base + strings.Repeat("lorem ipsum ", max(0, size-len(base)-len(tail))/12) + tail)
}

// BenchmarkMessagesToChat is the request side of the translation lane for
// an Anthropic client: decode, translate, encode.
func BenchmarkMessagesToChat(b *testing.B) {
	for _, size := range []int{5 << 10, 200 << 10} {
		body := anthropicBody(size)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var in anthropic.MessagesRequest
				if err := decode(body, &in); err != nil {
					b.Fatal(err)
				}
				out, _, err := MessagesToChat(&in, "u", Caps{}, PolicyDefault, goldenSigner)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := encode(out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChatToMessages is the same for an OpenAI client.
func BenchmarkChatToMessages(b *testing.B) {
	for _, size := range []int{5 << 10, 200 << 10} {
		body := openAIBody(size)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var in openai.ChatRequest
				if err := decode(body, &in); err != nil {
					b.Fatal(err)
				}
				out, _, err := ChatToMessages(&in, "u", Caps{}, PolicyDefault, goldenSigner)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := encode(out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func splitEvents(stream []byte) [][]byte {
	var out [][]byte
	for len(stream) > 0 {
		n := sse.Split(stream)
		if n == 0 {
			break
		}
		out = append(out, stream[:n])
		stream = stream[n:]
	}
	return out
}

// BenchmarkStreamChatToMessages reports the cost per upstream event of
// translating a 50-chunk OpenAI stream for an Anthropic client.
func BenchmarkStreamChatToMessages(b *testing.B) {
	var up bytes.Buffer
	up.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"usage\":null}\n\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&up, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"},\"finish_reason\":null}],\"usage\":null}\n\n", i)
	}
	up.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n")
	up.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":50,\"total_tokens\":70}}\n\n")
	up.WriteString("data: [DONE]\n\n")
	events := splitEvents(up.Bytes())
	b.ReportAllocs()
	for b.Loop() {
		s := NewChatToMessagesStream(&Plan{AnswerModel: "m", signer: goldenSigner})
		for _, ev := range events {
			s.Feed(ev)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// BenchmarkStreamMessagesToChat reports the cost per upstream event of
// translating a 50-delta Anthropic stream for an OpenAI client.
func BenchmarkStreamMessagesToChat(b *testing.B) {
	var up bytes.Buffer
	up.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":3000,\"output_tokens\":2}}}\n\n")
	up.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&up, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word%d \"}}\n\n", i)
	}
	up.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	up.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":51}}\n\n")
	up.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	events := splitEvents(up.Bytes())
	b.ReportAllocs()
	for b.Loop() {
		s := NewMessagesToChatStream(&Plan{AnswerModel: "m", IncludeUsage: true}, 1)
		for _, ev := range events {
			s.Feed(ev)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// anthropicTextStream is a 50-delta Anthropic text stream.
func anthropicTextStream() [][]byte {
	var up bytes.Buffer
	up.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":3000,\"output_tokens\":2}}}\n\n")
	up.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&up, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word%d \"}}\n\n", i)
	}
	up.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	up.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":51}}\n\n")
	up.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return splitEvents(up.Bytes())
}

// BenchmarkStreamMessagesToResponses reports the cost per upstream event
// of translating a 50-delta Anthropic stream for a Responses client.
func BenchmarkStreamMessagesToResponses(b *testing.B) {
	events := anthropicTextStream()
	req := &responses.Request{Model: "m", Stream: true}
	b.ReportAllocs()
	for b.Loop() {
		s := NewMessagesToResponsesStream(&Plan{AnswerModel: "m", signer: goldenSigner, rp: &responsesPlan{req: req}}, 1)
		for _, ev := range events {
			s.Feed(ev)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// BenchmarkStreamResponsesToMessages reports the cost per upstream event
// of translating a 50-delta Responses stream for an Anthropic client.
func BenchmarkStreamResponsesToMessages(b *testing.B) {
	var up []byte
	ev := func(typ, rest string) {
		up = fmt.Appendf(up, "event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, rest)
	}
	ev("response.created", `,"sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}`)
	ev("response.output_item.added", `,"sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`)
	for i := 0; i < 50; i++ {
		ev("response.output_text.delta", fmt.Sprintf(`,"sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"word%d ","logprobs":[]`, i+2, i))
	}
	ev("response.output_item.done", `,"sequence_number":52,"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[]}`)
	ev("response.completed", `,"sequence_number":53,"response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":20,"output_tokens":50,"total_tokens":70}}`)
	events := splitEvents(up)
	b.ReportAllocs()
	for b.Loop() {
		s := NewResponsesToMessagesStream(&Plan{AnswerModel: "m", signer: goldenSigner})
		for _, ev := range events {
			s.Feed(ev)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// BenchmarkWholeExchange is a non-streaming translated exchange: the
// client's ~1 KB request to an Anthropic body, and the answer back, for an
// OpenAI chat client and for a Responses client; and an Anthropic client's
// to a Chat body and back.
func BenchmarkWholeExchange(b *testing.B) {
	text := strings.Repeat("Please review the service description. ", 22)
	chatAnswer := []byte(`{"id":"chatcmpl-bench0001","object":"chat.completion","created":1,"model":"gpt-bench","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat("A gateway adds routing, auth and accounting in front of a model. ", 5) + `","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":300,"completion_tokens":64,"total_tokens":364,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`)
	answer := []byte(`{"id":"msg_bench0001","type":"message","role":"assistant","model":"claude-bench","content":[{"type":"text","text":"` +
		strings.Repeat("A gateway adds routing, auth and accounting in front of a model. ", 5) + `"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":64}}`)
	for _, c := range []struct {
		name     string
		body     []byte
		request  func(context.Context, []byte, Target) ([]byte, *Plan, error)
		response func([]byte, *Plan, int64) ([]byte, []byte, meter.Usage, error)
	}{
		{"chat", []byte(`{"model":"m","messages":[{"role":"system","content":"You are careful."},{"role":"user","content":"` + text + `"}],"temperature":0.7,"max_tokens":256,"user":"u1"}`),
			ChatBodyToMessages, MessagesAnswerToChat},
		{"responses", []byte(`{"model":"m","instructions":"You are careful.","input":[{"role":"user","content":"` + text + `"}],"max_output_tokens":256,"store":false}`),
			ResponsesBodyToMessages, MessagesAnswerToResponses},
		{"messages", []byte(`{"model":"m","system":"You are careful.","messages":[{"role":"user","content":"` + text + `"}],"temperature":0.7,"max_tokens":256,"metadata":{"user_id":"u1"}}`),
			MessagesBodyToChat, ChatAnswerToMessages},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			t := Target{Model: "u", Signer: goldenSigner}
			for b.Loop() {
				_, p, err := c.request(b.Context(), c.body, t)
				if err != nil {
					b.Fatal(err)
				}
				a := answer
				if c.name == "messages" {
					a = chatAnswer
				}
				if _, _, _, err := c.response(a, p, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// agentChatBody is a coding agent's Chat request of about size bytes: a
// system prompt, tools, and a tool loop of many turns.
func agentChatBody(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"m","max_completion_tokens":1024,"tools":[`)
	for i := range 8 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":"tool_%d","description":"%s","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}`, i, strings.Repeat("Reads things. ", 30))
	}
	b.WriteString(`],"messages":[{"role":"system","content":"` + strings.Repeat("You are a coding agent. ", 300) + `"},{"role":"user","content":"Fix the bug"}`)
	for i := 0; b.Len() < size-100; i++ {
		fmt.Fprintf(&b, `,{"role":"assistant","content":"Reading.","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"tool_1","arguments":"{\"path\":\"f%d.go\"}"}}]}`, i, i)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":"%s"}`, i, strings.Repeat("package main // code ", 60))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkChatToMessagesCache is the request side for an OpenAI agent
// on a Claude model, with and without the gateway's breakpoints: the
// difference is what placing them costs.
func BenchmarkChatToMessagesCache(b *testing.B) {
	body := agentChatBody(100 << 10)
	for _, c := range []struct {
		name  string
		cache Cache
	}{{"off", Cache{}}, {"auto", Cache{Breakpoints: true}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, p, err := ChatBodyToMessages(b.Context(), body, Target{Model: "u", Signer: goldenSigner, Cache: c.cache}); err != nil || p.PlacedBreakpoints != c.cache.Breakpoints {
					b.Fatal(err)
				}
			}
		})
	}
}
