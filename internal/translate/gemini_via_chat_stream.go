package translate

// ChatToGeminiStream turns a Chat Completions chunk stream into a Gemini
// client's stream (see geminiWriter). It is made per request and is not
// safe for concurrent use.
type ChatToGeminiStream struct{ answerStream }

// NewChatToGeminiStream starts a translated stream for p.
func NewChatToGeminiStream(p *Plan, _ int64) *ChatToGeminiStream {
	return &ChatToGeminiStream{answerStream{r: &chatReader{p: p}, w: newGeminiWriter(p, false)}}
}
