package translate

import (
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
)

// chatReader reads a Chat Completions answer, whole or as a chunk stream,
// into answer events. Reasoning text (reasoning_content, or reasoning) is
// thinking, and sealed as text when the answer moves on, for upstreams
// that want it back (DeepSeek). Tool calls are keyed by their index (an
// upstream that leaves it out but sends distinct ids makes a new call per
// id), start when their name is known and end when the answer does: an
// upstream may interleave their arguments. The structured-output tool's
// arguments (Plan.JSONTool) are answer text.
type chatReader struct {
	p         *Plan
	calls     []*chatCall
	reasoning []byte // reasoning text not yet sealed
	thinking  bool   // reasoning came since the last answer content
	finish    string
	refused   bool
	use       meter.Usage
	ended     bool
}

type chatCall struct {
	key      int
	id, name string
	started  bool
	json     bool // the structured-output tool: its arguments are text
	dropped  bool // a call without a name: none can be made
}

// readChatAnswer reads a whole chat completion into w.
func readChatAnswer(body []byte, p *Plan, w answerWriter) (meter.Usage, error) {
	var u meter.Usage
	if !gjson.ValidBytes(body) {
		return u, &UpstreamError{Message: "upstream answer is not a valid chat completion"}
	}
	c := gjson.ParseBytes(body)
	openai.SetUsage(&u, c.Get("usage").Raw)
	ch := c.Get("choices.0")
	if !ch.IsObject() {
		return u, &UpstreamError{Message: "upstream returned no choices"}
	}
	r := &chatReader{p: p, use: u}
	w.begin(c.Get("id").Str)
	m := ch.Get("message")
	if content := m.Get("content"); content.IsArray() { // content parts, from some compatible servers
		r.delta(m, w, true)
		for _, part := range content.Array() {
			if t := part.Get("text"); t.Type == gjson.String && t.Str != "" {
				r.answer(w)
				w.text(t.Str, quotedRaw(t))
			}
		}
	} else {
		r.delta(m, w, true)
	}
	r.finish = ch.Get("finish_reason").Str
	w.usage(u)
	r.end(w)
	return u, nil
}

func (r *chatReader) usage() meter.Usage { return r.use }

func (r *chatReader) startError(_, data []byte) (answerError, bool) {
	if !isErrorChunk(data) {
		return answerError{}, false
	}
	return openAIAnswerError(0, data), true
}

func (r *chatReader) event(_, data []byte, w answerWriter) {
	if string(data) == "[DONE]" {
		r.end(w)
		return
	}
	if isErrorChunk(data) {
		w.fail(openAIAnswerError(0, data))
		return
	}
	chunk := gjson.Parse(unsafeString(data))
	if !chunk.IsObject() {
		return // not a chunk: ignored, as SDKs do with unknown data
	}
	w.begin(chunk.Get("id").Str)
	if c := chunk.Get("choices.0"); c.Exists() {
		r.delta(c.Get("delta"), w, false)
		if f := c.Get("finish_reason"); f.Type == gjson.String && r.finish == "" {
			r.finish = strings.Clone(f.Str) // the first finish wins; some upstreams repeat it
		}
	}
	if u := chunk.Get("usage"); u.IsObject() {
		openai.SetUsage(&r.use, u.Raw) // running totals: the last one wins
		w.usage(r.use)
	}
}

// delta reads a chunk's delta, or (whole) a whole answer's message: all
// of it before the finish reason, which may ride on the same chunk.
func (r *chatReader) delta(d gjson.Result, w answerWriter, whole bool) {
	t := d.Get("reasoning_content")
	if t.Type != gjson.String || t.Str == "" {
		t = d.Get("reasoning")
	}
	if t.Type == gjson.String && t.Str != "" {
		r.reasoning = append(r.reasoning, t.Str...)
		r.thinking = true
		w.thinking(t.Str, quotedRaw(t))
	}
	if t := d.Get("content"); t.Type == gjson.String && t.Str != "" {
		r.answer(w)
		w.text(t.Str, quotedRaw(t))
	}
	if t := d.Get("refusal"); t.Type == gjson.String && t.Str != "" {
		r.answer(w)
		r.refused = true
		w.text(t.Str, quotedRaw(t))
	}
	if tcs := d.Get("tool_calls"); tcs.IsArray() {
		r.answer(w)
		r.toolCalls(tcs, w, whole)
	}
}

// answer seals the reasoning before the answer's content.
func (r *chatReader) answer(w answerWriter) {
	if r.thinking {
		w.reasoning(sealedReasoning{Text: string(r.reasoning)})
		r.reasoning, r.thinking = r.reasoning[:0], false
	}
}

func (r *chatReader) toolCalls(tcs gjson.Result, w answerWriter, whole bool) {
	frags := tcs.Array()
	if !whole {
		slices.SortStableFunc(frags, func(a, b gjson.Result) int { return int(a.Get("index").Int() - b.Get("index").Int()) })
	}
	for n, tc := range frags {
		key := int(tc.Get("index").Int())
		if whole {
			key = n
		}
		id := tc.Get("id").Str
		c := r.call(key)
		if !whole && !tc.Get("index").Exists() && c != nil && id != "" && id != c.id {
			key, c = r.maxKey()+1, nil // no index but a new id: a new call
		}
		if c == nil {
			if len(r.calls) >= maxToolCalls {
				continue
			}
			c = &chatCall{key: key, id: strings.Clone(id)}
			r.calls = append(r.calls, c)
		}
		if name := tc.Get("function.name").Str; name != "" && !c.started && name != c.name {
			c.name = strings.Clone(c.name + name) // a few upstreams split the name itself
		}
		if c.id == "" {
			c.id = strings.Clone(id)
		}
		if a := tc.Get("function.arguments"); a.Type == gjson.String && a.Str != "" {
			r.startCall(c, w)
			switch {
			case c.dropped:
			case c.json:
				w.text(a.Str, quotedRaw(a))
			default:
				w.toolArgs(c.key, a.Str, quotedRaw(a))
			}
		}
	}
}

func (r *chatReader) startCall(c *chatCall, w answerWriter) {
	if c.started {
		return
	}
	c.started = true
	switch {
	case c.name == "":
		c.dropped = true
	case r.p.JSONTool && c.name == jsonToolName:
		c.json = true
	default:
		w.toolStart(c.key, c.id, c.name)
	}
}

func (r *chatReader) call(key int) *chatCall {
	for _, c := range r.calls {
		if c.key == key {
			return c
		}
	}
	return nil
}

func (r *chatReader) maxKey() int {
	m := -1
	for _, c := range r.calls {
		m = max(m, c.key)
	}
	return m
}

// end finishes the answer: the reasoning nothing followed, the calls in
// index order, then the finish reason.
func (r *chatReader) end(w answerWriter) {
	if r.ended {
		return
	}
	r.ended = true
	r.answer(w)
	slices.SortStableFunc(r.calls, func(a, b *chatCall) int { return a.key - b.key })
	for _, c := range r.calls {
		r.startCall(c, w)
		if !c.json && !c.dropped {
			w.toolEnd(c.key)
		}
	}
	w.finish(chatStop(r.finish, r.refused))
}

// close ends the answer at the end of the body: cleanly after a finish
// reason, even without [DONE]; else with an error.
func (r *chatReader) close(eof bool, msg string, w answerWriter) {
	if eof && r.finish != "" {
		r.end(w)
		return
	}
	w.fail(answerError{status: 500, message: msg})
}

// chatStop reads a finish_reason.
func chatStop(finish string, refused bool) answerStop {
	switch {
	case refused || finish == openai.FinishContentFilter:
		return stopRefusal
	case finish == openai.FinishLength:
		return stopMaxTokens
	case finish == openai.FinishToolCalls || finish == openai.FinishFunctionCall:
		return stopToolUse
	}
	return stopEnd
}

// openAIAnswerError reads an error in OpenAI's envelope, a Chat or a
// Responses upstream's (status 0: a stream's error, whose type and code
// say the status). The upstream refusing the gateway's credential or
// account is a 502 no retry fixes: the client's own key was fine.
func openAIAnswerError(status int, body []byte) answerError {
	e := gjson.GetBytes(body, "error")
	typ, code := e.Get("type").String(), e.Get("code").String()
	ae := answerError{status: status, message: errorMessage(body, "error.message")}
	if status == 0 {
		ae.status = openai.StatusForError(typ, code)
	}
	if ae.status == 401 || ae.status == 402 || code == "insufficient_quota" {
		ae.status, ae.noRetry = 502, true
		ae.message = "upstream rejected the gateway's credential or account: " + ae.message
	}
	ae.retry = retryDelay(ae.message)
	return ae
}
