package translate

import (
	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/meter"
)

// responsesReader reads a Responses answer, whole or as an event stream,
// into answer events. A reasoning item's summary (or reasoning text) is
// thinking, and the item itself, encrypted_content and all, is the sealed
// reasoning the upstream needs back. Function calls are keyed by their
// output index; a custom tool's input reaches the client's function as
// {"input": …}. The structured-output tool's arguments (Plan.JSONTool)
// are answer text. Hosted tools' items ran upstream: left out.
type responsesReader struct {
	p       *Plan
	call    int   // output index of the open call, -1 none
	json    bool  // the open call is the structured-output tool
	args    bool  // it had argument deltas
	summary int64 // the open reasoning item's last summary index, -1 none
	tools   bool
	refused bool
	use     meter.Usage
}

func newResponsesReader(p *Plan) *responsesReader {
	return &responsesReader{p: p, call: -1, summary: -1}
}

// readResponsesAnswer reads a whole Responses answer into w.
func readResponsesAnswer(body []byte, p *Plan, w answerWriter) (meter.Usage, error) {
	res, u, err := responseBody(body)
	if err != nil {
		return u, err
	}
	r := newResponsesReader(p)
	w.begin(res.Get("id").Str)
	for i, it := range res.Get("output").Array() {
		switch it.Get("type").Str {
		case "reasoning":
			if t := summaryText(it); t != "" {
				w.thinking(t, quote(t))
			}
			r.reasoning(it, w)
		case "message":
			for _, c := range it.Get("content").Array() {
				t := c.Get("text")
				if c.Get("type").Str == "refusal" {
					t, r.refused = c.Get("refusal"), true
				}
				if t.Type == gjson.String && t.Str != "" {
					w.text(t.Str, quotedRaw(t))
				}
			}
		case "function_call", "custom_tool_call":
			if it.Get("name").Str == "" {
				return u, &UpstreamError{Message: errNamelessCall}
			}
			r.startCall(i, it, w)
			r.callDone(it, w)
		}
	}
	w.usage(u)
	w.finish(r.stop(res))
	return u, nil
}

func (r *responsesReader) usage() meter.Usage { return r.use }

func (r *responsesReader) startError(_, data []byte) (answerError, bool) {
	status, body, ok := ResponsesErrorEvent(data)
	if !ok {
		return answerError{}, false
	}
	return openAIAnswerError(status, body), true
}

func (r *responsesReader) event(name, data []byte, w answerWriter) {
	d := gjson.Parse(unsafeString(data))
	if !d.IsObject() {
		return
	}
	typ := d.Get("type").Str
	if typ == "" {
		typ = unsafeString(name)
	}
	if typ == "error" || typ == "response.failed" {
		if status, body, failed := ResponsesErrorEvent(data); failed {
			w.fail(openAIAnswerError(status, body))
			return
		}
	}
	w.begin(d.Get("response.id").Str) // response.created comes first
	switch typ {
	case "response.output_item.added":
		it := d.Get("item")
		switch it.Get("type").Str {
		case "function_call", "custom_tool_call":
			if it.Get("name").Str != "" {
				r.startCall(int(d.Get("output_index").Int()), it, w)
			}
		case "reasoning":
			r.summary = -1
		}
	case "response.output_text.delta", "response.refusal.delta":
		if t := d.Get("delta"); t.Type == gjson.String && t.Str != "" {
			r.refused = r.refused || typ == "response.refusal.delta"
			w.text(t.Str, quotedRaw(t))
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if t := d.Get("delta"); t.Type == gjson.String && t.Str != "" {
			i := d.Get("summary_index").Int()
			if r.summary >= 0 && i != r.summary {
				w.thinking("\n\n", `"\n\n"`) // the next summary part
			}
			r.summary = i
			w.thinking(t.Str, quotedRaw(t))
		}
	case "response.function_call_arguments.delta":
		if t := d.Get("delta"); r.call >= 0 && t.Type == gjson.String && t.Str != "" {
			r.args = true
			if r.json {
				w.text(t.Str, quotedRaw(t))
			} else {
				w.toolArgs(r.call, t.Str, quotedRaw(t))
			}
		}
	case "response.output_item.done":
		it := d.Get("item")
		switch it.Get("type").Str {
		case "reasoning":
			r.reasoning(it, w)
		case "function_call", "custom_tool_call":
			if r.call < 0 { // named only now, or not at all
				if it.Get("name").Str == "" {
					w.fail(answerError{status: 502, message: errNamelessCall})
					return
				}
				r.startCall(int(d.Get("output_index").Int()), it, w)
			}
			r.callDone(it, w)
		}
	case "response.completed", "response.incomplete":
		res := d.Get("response")
		responses.SetUsage(&r.use, res.Get("usage").Raw)
		w.usage(r.use)
		w.finish(r.stop(res))
	}
}

// reasoning sends a finished reasoning item as the sealed reasoning.
func (r *responsesReader) reasoning(it gjson.Result, w answerWriter) {
	v := jsontext.Value(it.Raw).Clone()
	if v.Compact() == nil {
		w.reasoning(sealedReasoning{Item: v})
	}
}

func (r *responsesReader) startCall(k int, it gjson.Result, w answerWriter) {
	name := it.Get("name").Str
	r.call, r.args, r.json = k, false, r.p.JSONTool && name == jsonToolName
	if !r.json {
		w.toolStart(k, it.Get("call_id").Str, name)
	}
}

// callDone ends the open call: its arguments, when they came only whole
// (or, for a custom tool, as its input), then its end.
func (r *responsesReader) callDone(it gjson.Result, w answerWriter) {
	if !r.args || it.Get("type").Str == "custom_tool_call" {
		if args := callArguments(it); args != "" {
			if r.json {
				w.text(args, quote(args))
			} else {
				w.toolArgs(r.call, args, quote(args))
			}
		}
	}
	if !r.json {
		w.toolEnd(r.call)
		r.tools = true
	}
	r.call, r.json = -1, false
}

// stop reads a finished response's status.
func (r *responsesReader) stop(res gjson.Result) answerStop {
	switch {
	case r.refused:
		return stopRefusal
	case res.Get("status").Str == responses.StatusIncomplete:
		if res.Get("incomplete_details.reason").Str == "content_filter" {
			return stopRefusal
		}
		return stopMaxTokens
	case r.tools:
		return stopToolUse
	}
	return stopEnd
}

// close fails the answer: a Responses stream ends with its terminal event.
func (r *responsesReader) close(_ bool, msg string, w answerWriter) {
	w.fail(answerError{status: 500, message: msg})
}
