package translate

// MessagesToGeminiStream turns an Anthropic upstream's event stream into
// a Gemini client's stream (see geminiWriter). It is made per request and
// is not safe for concurrent use.
type MessagesToGeminiStream struct{ answerStream }

// NewMessagesToGeminiStream starts a translated stream for p.
func NewMessagesToGeminiStream(p *Plan, _ int64) *MessagesToGeminiStream {
	return &MessagesToGeminiStream{answerStream{r: &messagesReader{p: p}, w: newGeminiWriter(p, false)}}
}
