package translate

import "github.com/tollgate/tollgate/internal/meter"

// MessagesAnswerToGemini translates a whole Messages answer into a Gemini
// generateContent answer, and when the client asked for a stream, into a
// stream of one event holding it. An answer that cannot be translated is
// an *UpstreamError.
func MessagesAnswerToGemini(body []byte, p *Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
	return geminiAnswer(body, p, readMessagesAnswer)
}

// AnthropicErrorToGemini translates an Anthropic upstream error (status
// 0: a stream's error event) into Google's envelope; noRetry asks the
// client not to retry.
func AnthropicErrorToGemini(status int, body []byte) (int, []byte, bool) {
	return geminiError(anthropicAnswerError(status, body))
}
