package translate

import (
	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/meter"
)

// geminiIncomplete is the Responses incomplete reason of a Gemini finish
// (or of a blocked prompt); "" for a complete answer.
func geminiIncomplete(finish string, blocked bool) string {
	return messagesIncomplete(geminiStopReason(finish, false, blocked))
}

// geminiParts writes a Gemini answer's (or event's) parts as output
// items: thoughts as reasoning, text as a message, each function call as
// a function_call item. A thought signature is sealed into the
// encrypted_content of the reasoning item it ends, or of one opened for
// it just before the call or text that carried it.
func geminiParts(w *rsOut, p *Plan, c gjson.Result) {
	for _, part := range c.Get("content.parts").Array() {
		sig := ""
		if g := part.Get("thoughtSignature"); g.Type == gjson.String && g.Str != "" {
			sig = p.signer.sealGemini(g.Str)
		}
		text := part.Get("text")
		fc := part.Get("functionCall")
		carry := func() {
			if sig != "" {
				w.openReasoning()
				w.seal(sig)
			}
		}
		switch {
		case part.Get("thought").Bool():
			w.reasoning(text.Str, quotedRaw(text))
			if sig != "" {
				w.seal(sig)
			}
		case fc.IsObject() && fc.Get("name").String() == "":
			// A call without a name cannot be run or answered: left out.
		case fc.IsObject():
			carry()
			args := fc.Get("args").Raw
			if args == "" || args == "null" {
				args = "{}"
			}
			a := jsontext.Value(args).Clone()
			a.Compact()
			w.call(geminiCallIDWith(fc.Get("id").String(), "call_"), p.responsesTool(p.clientToolName(fc.Get("name").String())))
			w.arguments(string(a), quote(string(a)))
		case text.Type == gjson.String && text.Str != "":
			carry()
			w.outputText(text.Str, quotedRaw(text))
		case sig != "":
			carry()
		}
	}
}

// GeminiAnswerToResponses translates a whole Gemini answer into the
// response a Responses client asked for, and when it asked for a stream,
// into the events of one.
func GeminiAnswerToResponses(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	r := gjson.ParseBytes(body)
	if !r.IsObject() {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid Gemini response"}
	}
	gemini.SetUsage(&u, r.Get("usageMetadata").Raw)
	w := newRSOut(p, created)
	w.quiet = !p.Stream
	c := r.Get("candidates.0")
	geminiParts(w, p, c)
	blocked := !c.Exists() && r.Get("promptFeedback.blockReason").String() != ""
	w.finish(geminiIncomplete(c.Get("finishReason").String(), blocked), u, r.Get("usageMetadata").IsObject())
	if p.Stream {
		return nil, w.out, u, nil
	}
	return w.response.AppendJSON(nil), nil, u, nil
}

// geminiFailureCode is the response.failed code of a Google error status.
func geminiFailureCode(status string) string {
	switch status {
	case "RESOURCE_EXHAUSTED":
		return "rate_limit_exceeded"
	case "UNAVAILABLE":
		return "server_is_overloaded"
	}
	return "server_error"
}
