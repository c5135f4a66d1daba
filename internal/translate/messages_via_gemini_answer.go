package translate

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/meter"
)

// GeminiToMessages translates a whole Gemini answer into a Messages
// answer: thoughts become thinking blocks, function calls tool_use
// blocks. A thought signature reaches the client as a thinking block's
// (sealed) signature, placed where Gemini put it: on the thought it ends,
// or on an empty thinking block just before the call or text that
// carried it. A prompt Gemini blocked is a refusal with no content.
func GeminiToMessages(r *gemini.Response, p *Plan) (*anthropic.Response, meter.Usage, error) {
	var u meter.Usage
	gemini.SetUsage(&u, string(r.UsageMetadata))
	out := &anthropic.Response{ID: "msg_" + base62(24), Type: "message", Role: "assistant", Model: p.AnswerModel,
		Content: []anthropic.Block{}}
	if r.ResponseID != "" {
		out.ID = "msg_" + sanitizeID(r.ResponseID)
	}
	blocked := r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" && len(r.Candidates) == 0
	finish, tools := "", false
	if len(r.Candidates) > 0 {
		c := r.Candidates[0]
		finish = c.FinishReason
		var thinking *anthropic.Block
		closeThinking := func(sig string) {
			if thinking == nil {
				return
			}
			thinking.Signature = sig
			if sig == "" {
				thinking.Signature = p.signer.Sign(thinking.Thinking)
			}
			out.Content = append(out.Content, *thinking)
			thinking = nil
		}
		for _, part := range c.Content.Parts {
			sig := ""
			if part.ThoughtSignature != "" {
				sig = p.signer.sealGemini(part.ThoughtSignature)
			}
			switch {
			case part.Thought:
				if thinking == nil {
					thinking = &anthropic.Block{Type: "thinking"}
				}
				thinking.Thinking += part.Text
				if sig != "" {
					closeThinking(sig)
				}
			case part.FunctionCall != nil && part.FunctionCall.Name == "":
				// A call without a name cannot be run or answered: left out.
			case part.FunctionCall != nil:
				closeThinking("")
				if sig != "" {
					out.Content = append(out.Content, anthropic.Block{Type: "thinking", Signature: sig})
				}
				args := part.FunctionCall.Args
				if len(args) == 0 || string(args) == "null" {
					args = jsontext.Value("{}")
				}
				out.Content = append(out.Content, anthropic.Block{Type: "tool_use", ID: geminiCallID(part.FunctionCall.ID),
					Name: p.clientToolName(part.FunctionCall.Name), Input: args})
				tools = true
			case part.Text != "":
				closeThinking("")
				if sig != "" {
					out.Content = append(out.Content, anthropic.Block{Type: "thinking", Signature: sig})
				}
				if n := len(out.Content); n > 0 && out.Content[n-1].Type == "text" {
					out.Content[n-1].Text += part.Text
				} else {
					out.Content = append(out.Content, anthropic.Block{Type: "text", Text: part.Text})
				}
			case sig != "":
				closeThinking("")
				out.Content = append(out.Content, anthropic.Block{Type: "thinking", Signature: sig})
			}
		}
		closeThinking("")
	}
	stop := geminiStopReason(finish, tools && !p.JSONTool, blocked)
	out.StopReason = &stop
	out.Usage = mustJSON(anthropicUsage(u))
	return out, u, nil
}

// geminiCallID is the tool_use id of a Gemini function call: its own id
// (Gemini 3 sends one) made safe, or a new one.
func geminiCallID(id string) string { return geminiCallIDWith(id, "toolu_") }

// GeminiAnswerToMessages translates a whole Gemini answer, and when the
// client asked for a stream, into the events of one.
func GeminiAnswerToMessages(body []byte, p *Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
	var r gemini.Response
	if err := decode(body, &r); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid Gemini response", Err: err}
	}
	m, u, err := GeminiToMessages(&r, p)
	if err != nil {
		return nil, nil, u, err
	}
	if p.Stream {
		return nil, MessagesStream(m), u, nil
	}
	out, err = encodeMessagesResponse(m)
	return out, nil, u, err
}

// GeminiErrorToAnthropic translates a Gemini error answer ({"error":
// {"code", "message", "status"}}, sometimes in a list) into the Anthropic
// envelope; status 0 is a stream's error event. noRetry is set for the
// errors no retry can fix.
func GeminiErrorToAnthropic(status int, body []byte) (int, []byte, bool) {
	e := gjson.GetBytes(body, "error")
	if !e.Exists() {
		e = gjson.GetBytes(body, "0.error")
	}
	msg := e.Get("message").String()
	if msg == "" {
		msg = strings.TrimSpace(string(body))
		if msg == "" {
			msg = "the upstream answered status " + strconv.Itoa(status)
		}
	}
	k, ok := googleErrorTypes[e.Get("status").String()]
	if !ok {
		code := status
		if code == 0 {
			code = int(e.Get("code").Int())
		}
		k.status, k.typ = anthropicStatusType(code)
	}
	if status != 0 && k.status < 500 && status >= 500 {
		k.status = status // a 5xx answer stays one, whatever its body says
	}
	noRetry := k.status >= 400 && k.status < 500 && k.status != 429
	return k.status, anthropic.MarshalError(k.typ, msg, ""), noRetry
}
