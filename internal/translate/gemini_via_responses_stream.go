package translate

// ResponsesToGeminiStream turns a Responses event stream into a Gemini
// client's stream (see geminiWriter). It is made per request and is not
// safe for concurrent use.
type ResponsesToGeminiStream struct{ answerStream }

// NewResponsesToGeminiStream starts a translated stream for p.
func NewResponsesToGeminiStream(p *Plan, _ int64) *ResponsesToGeminiStream {
	return &ResponsesToGeminiStream{answerStream{r: newResponsesReader(p), w: newGeminiWriter(p, false)}}
}
