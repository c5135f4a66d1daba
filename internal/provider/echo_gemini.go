package provider

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/sse"
)

// echoGemini is echo's answer to a Gemini request: generateContent, a
// stream of server-sent events (each a whole answer holding the words
// since the last, the last with finishReason and usageMetadata), or
// countTokens' totalTokens. The model is the one the URL named.
func echoGemini(r *Request, body []byte, in int64) *http.Response {
	model := strings.TrimPrefix(r.Model, "models/")
	if model == "" {
		model = "echo"
	}
	text := lastGeminiUserText(body)
	out := estimateTokens([]byte(text))
	usage := map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}
	answer := func(text string, last bool) []byte {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "index": 0}
		a := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": randomID()}
		if last {
			cand["finishReason"] = "STOP"
			a["usageMetadata"] = usage
		}
		b, _ := jsonx.Marshal(a)
		return b
	}
	if r.Stream {
		ws := words(text)
		if len(ws) == 0 {
			ws = []string{""}
		}
		events := make([][]byte, len(ws))
		for i, w := range ws {
			events[i] = sse.AppendEvent(nil, "", answer(w, i == len(ws)-1))
		}
		return streamResponse(events)
	}
	return jsonResponse(answer(text, true))
}

// echoGeminiCount is echo's countTokens answer.
func echoGeminiCount(in int64) *http.Response {
	resp := jsonResponse(fmt.Appendf(nil, `{"totalTokens":%d}`, in))
	resp.Header.Set("Tollgate-Token-Count", "estimate")
	return resp
}

// lastGeminiUserText is the text of the last user turn of a Gemini
// request (a count body's wrapped request too).
func lastGeminiUserText(body []byte) string {
	req := gjson.ParseBytes(body)
	if inner := req.Get("generateContentRequest"); inner.IsObject() {
		req = inner
	}
	turns := req.Get("contents").Array()
	for i := len(turns) - 1; i >= 0; i-- {
		if role := turns[i].Get("role").Str; role != "" && role != "user" {
			continue
		}
		var parts []string
		for _, p := range turns[i].Get("parts").Array() {
			if t := p.Get("text"); t.Type == gjson.String {
				parts = append(parts, t.Str)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
		return "(the last user message has no text)"
	}
	return "(no user message)"
}
