package translate

import "github.com/tollgate/tollgate/internal/meter"

// ResponsesAnswerToGemini translates a whole Responses answer into a
// Gemini generateContent answer, and when the client asked for a stream,
// into a stream of one event holding it. An answer that cannot be
// translated (or a failed response) is an *UpstreamError. A Responses
// upstream's errors have OpenAI's envelope: OpenAIErrorToGemini.
func ResponsesAnswerToGemini(body []byte, p *Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
	return geminiAnswer(body, p, readResponsesAnswer)
}
