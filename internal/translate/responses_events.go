package translate

import (
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// rsOut writes a Responses event stream for a Responses client, whatever
// the upstream: the lifecycle events, one output item at a time (at most
// one open), each closed by its .done events, sequence numbers counting
// from 0, and exactly one terminal event. It keeps the finished items for
// the terminal event's response. It is made per stream and is not safe for
// concurrent use.
type rsOut struct {
	p       *Plan
	id      string
	created int64
	seq     int64
	out     []byte
	started bool
	ended   bool
	quiet   bool // build the items only: a whole answer has no events

	lastStatus string // the status of the item closed by finish, if not completed

	response responses.Response // the finished response, once ended

	items []responses.Item // finished output items
	open  *responses.Item  // the item being streamed
	text  []byte           // its text, reasoning summary, arguments or input so far

	deltaPrefix []byte // the open item's ids in its delta events, up to "delta":
	summary     bool   // the open reasoning item's summary part has started
}

func newRSOut(p *Plan, created int64) *rsOut {
	return &rsOut{p: p, id: newResponseID(), created: created}
}

// event appends one event: typ, its sequence number, then the members in
// fields (already encoded, starting with a comma).
func (w *rsOut) event(typ string, fields []byte) {
	if w.quiet || w.ended { // nothing follows the terminal event
		return
	}
	w.eventStart(typ)
	w.out = append(w.out, fields...)
	w.eventEnd()
}

// emit reports whether events are being written: not for a whole answer,
// and nothing after the terminal event.
func (w *rsOut) emit() bool { return !w.quiet && !w.ended }

// eventStart appends an event's name and its data up to the sequence
// number; eventEnd closes it. The data is JSON, which holds no raw line
// break, so it is one data line.
func (w *rsOut) eventStart(typ string) {
	b := append(w.out, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	w.out = strconv.AppendInt(b, w.seq, 10)
}

func (w *rsOut) eventEnd() {
	w.out = append(w.out, "}\n\n"...)
	w.seq++
}

// delta appends a delta event of the open item: its ids, then "delta"
// with quoted (a JSON string), then tail.
func (w *rsOut) delta(typ, quoted, tail string) {
	if w.quiet || w.ended {
		return
	}
	w.eventStart(typ)
	w.out = append(w.out, w.deltaPrefix...)
	w.out = append(w.out, quoted...)
	w.out = append(w.out, tail...)
	w.eventEnd()
}

// lifecycle appends an event that carries the whole response.
func (w *rsOut) lifecycle(typ string, r *responses.Response) {
	if !w.emit() {
		return
	}
	w.eventStart(typ)
	w.out = r.AppendJSON(append(w.out, `,"response":`...))
	w.eventEnd()
}

// begin sends response.created and response.in_progress, once.
func (w *rsOut) begin() {
	if w.started || w.quiet {
		return
	}
	w.started = true
	r := w.p.responseObject(w.id, w.created, responses.StatusInProgress)
	w.lifecycle("response.created", &r)
	w.lifecycle("response.in_progress", &r)
}

func (w *rsOut) index() int64 { return int64(len(w.items)) }

// itemEvent appends an event that carries a whole item: output_item.added
// or output_item.done.
func (w *rsOut) itemEvent(typ string, it *responses.Item) {
	if !w.emit() {
		return
	}
	w.eventStart(typ)
	w.out = append(w.out, `,"output_index":`...)
	w.out = strconv.AppendInt(w.out, w.index(), 10)
	w.out = it.AppendJSON(append(w.out, `,"item":`...))
	w.eventEnd()
}

// ids appends item_id, output_index and, when content is non-negative,
// content_index or (summary) summary_index.
func (w *rsOut) ids(b []byte, sub string, n int) []byte {
	b = append(b, `,"item_id":`...)
	b = jsonx.AppendQuote(b, w.open.ID)
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, w.index(), 10)
	if sub != "" {
		b = append(b, `,"`...)
		b = append(b, sub...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return b
}

// start opens an output item.
func (w *rsOut) start(it responses.Item) {
	w.begin()
	w.closeOpen()
	it.Status = "in_progress"
	w.open, w.text = &it, w.text[:0]
	if w.emit() {
		w.itemEvent("response.output_item.added", w.open)
	}
}

// Kinds of open items, by their type.
func (w *rsOut) openType() string {
	if w.open == nil {
		return ""
	}
	return w.open.Type
}

// openReasoning starts a reasoning item, unless one is open.
func (w *rsOut) openReasoning() {
	if w.openType() != "reasoning" {
		w.start(responses.Item{Type: "reasoning", ID: newItemID("rs"), Summary: []responses.Part{}})
		w.deltaPrefix = append(w.ids(w.deltaPrefix[:0], "summary_index", 0), `,"delta":`...)
		w.summary = false
	}
}

// openSummary starts the reasoning item's summary part, on its first
// text: an item with no text (a signature alone) has an empty summary.
func (w *rsOut) openSummary() {
	if !w.summary {
		w.summary = true
		if w.emit() {
			w.event("response.reasoning_summary_part.added", append(w.ids(nil, "summary_index", 0), `,"part":{"type":"summary_text","text":""}`...))
		}
	}
}

// reasoning streams summary text (quoted: a JSON string as it came).
func (w *rsOut) reasoning(delta, quoted string) {
	w.openReasoning()
	if delta == "" {
		return
	}
	w.openSummary()
	w.text = append(w.text, delta...)
	w.delta("response.reasoning_summary_text.delta", quoted, "")
}

// seal sets the encrypted_content of the open reasoning item (a copy:
// v may be a view into the stream's read buffer).
func (w *rsOut) seal(v string) {
	if w.openType() == "reasoning" {
		v = strings.Clone(v)
		w.open.EncryptedContent = &v
	}
}

// openMessage starts an assistant message item, unless one is open.
func (w *rsOut) openMessage() {
	if w.openType() != "message" {
		w.start(responses.Item{Type: "message", ID: newItemID("msg"), Role: "assistant", Content: responses.Content{Parts: []responses.Part{}}})
		w.deltaPrefix = append(w.ids(w.deltaPrefix[:0], "content_index", 0), `,"delta":`...)
		if w.emit() {
			w.event("response.content_part.added", append(w.ids(nil, "content_index", 0), `,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`...))
		}
	}
}

// outputText streams answer text.
func (w *rsOut) outputText(delta, quoted string) {
	w.openMessage()
	if delta == "" {
		return
	}
	w.text = append(w.text, delta...)
	w.delta("response.output_text.delta", quoted, `,"logprobs":[]`)
}

// call opens a function call (or a custom tool call) to the client's tool.
// The item is kept past the upstream event that opened it, so it keeps
// copies: callID and the name may be views into the stream's read buffer,
// which the next read overwrites.
func (w *rsOut) call(callID string, t rTool) {
	callID, t.name, t.namespace = strings.Clone(callID), strings.Clone(t.name), strings.Clone(t.namespace)
	it := responses.Item{Type: "function_call", ID: newItemID("fc"), CallID: callID, Name: t.name, Namespace: t.namespace, Arguments: new(string)}
	if t.custom {
		it = responses.Item{Type: "custom_tool_call", ID: newItemID("ctc"), CallID: callID, Name: t.name, Namespace: t.namespace, Input: new(string)}
	}
	w.start(it)
	w.deltaPrefix = append(w.ids(w.deltaPrefix[:0], "", 0), `,"delta":`...)
}

// webSearch sends a web search the upstream ran (Claude's web search
// server tool) as a whole web_search_call item.
func (w *rsOut) webSearch(query string) {
	action := mustJSON(map[string]any{"action": map[string]string{"type": "search", "query": query}})
	w.start(responses.Item{Type: "web_search_call", ID: newItemID("ws"), Extra: action})
	if w.emit() {
		for _, e := range [...]string{"in_progress", "searching", "completed"} {
			w.event("response.web_search_call."+e, w.ids(nil, "", 0))
		}
	}
	w.closeOpen()
}

// arguments streams a function call's arguments. A custom tool's input
// is sent whole when the call ends (it is inside the arguments' JSON).
func (w *rsOut) arguments(frag, quoted string) {
	w.text = append(w.text, frag...)
	if w.openType() == "function_call" {
		w.delta("response.function_call_arguments.delta", quoted, "")
	}
}

// closeOpen ends the open item with its .done events.
func (w *rsOut) closeOpen() {
	it := w.open
	if it == nil {
		return
	}
	text := string(w.text)
	emit := w.emit()
	// done appends an item's .done event: name, its ids (sub, as ids
	// takes it), then member with value quoted, then tail.
	done := func(name, sub, member, value, tail string) {
		w.eventStart(name)
		w.out = w.ids(w.out, sub, 0)
		w.out = append(w.out, member...)
		w.out = jsonx.AppendQuote(w.out, value)
		w.out = append(w.out, tail...)
		w.eventEnd()
	}
	switch it.Type {
	case "reasoning":
		it.Summary = []responses.Part{}
		if w.summary {
			if emit {
				done("response.reasoning_summary_text.done", "summary_index", `,"text":`, text, "")
				done("response.reasoning_summary_part.done", "summary_index", `,"part":{"type":"summary_text","text":`, text, "}")
			}
			it.Summary = []responses.Part{{Type: "summary_text", Text: text}}
		}
		if it.EncryptedContent == nil && w.p.signer != nil {
			enc := w.p.signer.encodeReasoning(text)
			it.EncryptedContent = &enc
		}
	case "message":
		if emit {
			done("response.output_text.done", "content_index", `,"text":`, text, `,"logprobs":[]`)
			done("response.content_part.done", "content_index", `,"part":{"type":"output_text","text":`, text, `,"annotations":[],"logprobs":[]}`)
		}
		it.Content = responses.Content{Parts: []responses.Part{{Type: "output_text", Text: text, Annot: emptyArray}}}
	case "function_call":
		if text == "" {
			text = "{}"
		}
		if emit {
			done("response.function_call_arguments.done", "", `,"name":`+quote(it.Name)+`,"arguments":`, text, "")
		}
		it.Arguments = &text
	case "custom_tool_call":
		input := customInput(text)
		if emit {
			done("response.custom_tool_call_input.delta", "", `,"delta":`, input, "")
			done("response.custom_tool_call_input.done", "", `,"input":`, input, "")
		}
		it.Input = &input
	}
	it.Status = cmpOr(w.lastStatus, "completed")
	if emit {
		w.itemEvent("response.output_item.done", it)
	}
	w.items = append(w.items, *it)
	w.open, w.text = nil, w.text[:0]
}

// finish closes the stream with response.completed, or
// response.incomplete with reason (max_output_tokens, content_filter).
func (w *rsOut) finish(reason string, u meter.Usage, usageKnown bool) {
	if w.ended {
		return
	}
	w.begin()
	if reason != "" {
		w.lastStatus = "incomplete" // the item the bound or filter cut
	}
	w.closeOpen()
	r := w.final(reason, u, usageKnown)
	w.response = r
	switch {
	case !w.emit():
	case reason != "":
		w.lifecycle("response.incomplete", &r)
	default:
		w.lifecycle("response.completed", &r)
	}
	w.ended = true
}

// final is the finished response.
func (w *rsOut) final(reason string, u meter.Usage, usageKnown bool) responses.Response {
	r := w.p.responseObject(w.id, w.created, responses.StatusCompleted)
	r.Output = w.items
	if r.Output == nil {
		r.Output = []responses.Item{}
	}
	if reason != "" {
		r.Status = responses.StatusIncomplete
		r.IncompleteDetails = &responses.Incomplete{Reason: reason}
	} else {
		done := w.created
		r.CompletedAt = &done
	}
	if usageKnown {
		r.Usage = responsesUsage(u)
	}
	return r
}

// fail closes the stream with response.failed, never a made-up
// completion. The response lists what was streamed: finished items, and
// the one cut short as incomplete.
func (w *rsOut) fail(code, msg string) {
	if w.ended {
		return
	}
	w.begin()
	r := w.p.responseObject(w.id, w.created, responses.StatusFailed)
	r.Error = &responses.Error{Code: code, Message: msg}
	r.Output = append([]responses.Item{}, w.items...)
	if it := w.open; it != nil {
		cut := *it
		cut.Status = "incomplete"
		text := string(w.text)
		switch cut.Type {
		case "reasoning":
			cut.Summary = []responses.Part{{Type: "summary_text", Text: text}}
		case "message":
			cut.Content = responses.Content{Parts: []responses.Part{{Type: "output_text", Text: text, Annot: emptyArray}}}
		case "function_call":
			cut.Arguments = &text
		case "custom_tool_call":
			cut.Input = &text
		}
		r.Output = append(r.Output, cut)
	}
	w.response = r
	if w.emit() {
		w.lifecycle("response.failed", &r)
	}
	w.ended = true
}

var emptyArray = []byte(`[]`)

// customInput is a custom tool's free-text input from the arguments of
// the function it was offered as ({"input": "…"}); arguments that are not
// that object are taken as the input itself.
func customInput(args string) string {
	var v struct {
		Input *string `json:"input"`
	}
	if jsonx.Unmarshal([]byte(args), &v) == nil && v.Input != nil {
		return *v.Input
	}
	return args
}
