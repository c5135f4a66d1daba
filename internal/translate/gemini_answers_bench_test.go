package translate

import (
	"fmt"
	"testing"
)

// benchGeminiStream reports the cost per upstream event of translating a
// stream for a Gemini client.
func benchGeminiStream(b *testing.B, events [][]byte, start func(*Plan) stream) {
	b.ReportAllocs()
	for b.Loop() {
		s := start(&Plan{AnswerModel: "m", signer: goldenSigner})
		for _, ev := range events {
			s.Feed(ev)
		}
		s.Close(true, "")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// BenchmarkStreamMessagesToGemini: a 50-delta Anthropic stream.
func BenchmarkStreamMessagesToGemini(b *testing.B) {
	benchGeminiStream(b, anthropicTextStream(), func(p *Plan) stream { return NewMessagesToGeminiStream(p, 1) })
}

// chatTextStream is a 50-chunk Chat Completions text stream.
func chatTextStream() [][]byte {
	var up []byte
	chunk := func(delta, finish string) {
		up = fmt.Appendf(up, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}],\"usage\":null}\n\n", delta, finish)
	}
	chunk(`{"role":"assistant","content":""}`, "null")
	for i := range 50 {
		chunk(fmt.Sprintf(`{"content":"word%d "}`, i), "null")
	}
	chunk(`{}`, `"stop"`)
	up = append(up, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":50,\"total_tokens\":70}}\n\ndata: [DONE]\n\n"...)
	return splitEvents(up)
}

// BenchmarkStreamChatToGemini: a 50-chunk Chat Completions stream.
func BenchmarkStreamChatToGemini(b *testing.B) {
	benchGeminiStream(b, chatTextStream(), func(p *Plan) stream { return NewChatToGeminiStream(p, 1) })
}

// responsesTextStream is a 50-delta Responses text stream.
func responsesTextStream() [][]byte {
	var up []byte
	ev := func(typ, rest string) {
		up = fmt.Appendf(up, "event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, rest)
	}
	ev("response.created", `,"sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}`)
	ev("response.output_item.added", `,"sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`)
	for i := range 50 {
		ev("response.output_text.delta", fmt.Sprintf(`,"sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"word%d ","logprobs":[]`, i+2, i))
	}
	ev("response.output_item.done", `,"sequence_number":52,"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[]}`)
	ev("response.completed", `,"sequence_number":53,"response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":20,"output_tokens":50,"total_tokens":70}}`)
	return splitEvents(up)
}

// BenchmarkStreamResponsesToGemini: a 50-delta Responses stream.
func BenchmarkStreamResponsesToGemini(b *testing.B) {
	benchGeminiStream(b, responsesTextStream(), func(p *Plan) stream { return NewResponsesToGeminiStream(p, 1) })
}
