package translate

import "github.com/tollgate/tollgate/internal/meter"

// ChatAnswerToGemini translates a whole Chat Completions answer into a
// Gemini generateContent answer, and when the client asked for a stream,
// into a stream of one event holding it. An answer that cannot be
// translated is an *UpstreamError.
func ChatAnswerToGemini(body []byte, p *Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
	return geminiAnswer(body, p, readChatAnswer)
}

// OpenAIErrorToGemini translates an error in OpenAI's envelope (a Chat
// or a Responses upstream's; status 0: a stream's error) into Google's
// envelope; noRetry asks the client not to retry.
func OpenAIErrorToGemini(status int, body []byte) (int, []byte, bool) {
	return geminiError(openAIAnswerError(status, body))
}
