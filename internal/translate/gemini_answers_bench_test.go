package translate

import "testing"

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
