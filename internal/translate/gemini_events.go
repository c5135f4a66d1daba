package translate

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// geminiWriter renders answer events for a Gemini client: a whole answer
// as one GenerateContentResponse, a stream as SSE events that each hold a
// GenerateContentResponse with the parts made since the last (text as it
// comes; a function call whole, as Gemini sends it, its arguments
// buffered until the call ends), the running usage on each, and the
// finish reason on the last. Reasoning becomes the thoughtSignature of
// the first part after it (thought parts aside), sealed, so that the
// client's next turn gives the upstream its reasoning back: Gemini
// clients keep signatures on the parts they keep, and may drop thought
// parts. Thought text is sent as thought parts only when the client asked
// (includeThoughts). It is made per answer and is not safe for concurrent
// use.
type geminiWriter struct {
	p     *Plan
	whole bool // one response for a whole answer, not stream events
	id    string
	state streamState

	out   []byte // bytes written since the last take
	parts []byte // the parts of the response being built, comma-separated

	pending  []byte        // the pending text part's string, without its quotes
	textKind geminiPending // what the pending text is
	textSig  string        // the pending text part's thoughtSignature

	sig    sealedReasoning // reasoning waiting for the part after it
	hasSig bool

	calls     []geminiCall // function calls whose arguments are coming
	malformed bool         // a call's arguments were not a JSON object
	use       meter.Usage
	gotUse    bool
}

// geminiPending is the kind of the pending text part.
type geminiPending uint8

const (
	pendingNone geminiPending = iota
	pendingText
	pendingThought
)

// geminiCall is a function call whose arguments are being buffered.
type geminiCall struct {
	k        int
	id, name string
	args     []byte
}

func newGeminiWriter(p *Plan, whole bool) *geminiWriter {
	return &geminiWriter{p: p, whole: whole}
}

// sseEnd ends a Gemini SSE event: Google's servers end lines with CRLF.
const sseEnd = "\r\n\r\n"

func (w *geminiWriter) begin(id string) {
	if w.state != stateBefore {
		return
	}
	w.state = stateStreaming
	w.id = strings.Clone(id)
	if w.id == "" {
		w.id = base62(24)
	}
}

func (w *geminiWriter) text(s, quoted string) {
	if s == "" {
		return
	}
	if w.textKind == pendingThought {
		w.flushText()
	}
	if w.textKind == pendingNone {
		w.textKind, w.textSig = pendingText, w.takeSig()
	}
	w.pending = append(w.pending, quoted[1:len(quoted)-1]...)
}

func (w *geminiWriter) thinking(s, quoted string) {
	if s == "" || !w.p.geminiThoughts {
		return
	}
	if w.textKind == pendingText {
		w.flushText()
	}
	w.textKind = pendingThought
	w.pending = append(w.pending, quoted[1:len(quoted)-1]...)
}

func (w *geminiWriter) reasoning(r sealedReasoning) {
	r = sealedReasoning{Blocks: cloneValue(r.Blocks), Text: strings.Clone(r.Text), Item: cloneValue(r.Item)}
	if w.hasSig {
		if w.sig.merge(r) {
			return
		}
		// Reasoning that cannot travel with the one before it: that one
		// gets a part of its own.
		w.flushText()
		w.addSignaturePart()
	}
	w.sig, w.hasSig = r, true
}

func cloneValue(v jsontext.Value) jsontext.Value {
	if len(v) == 0 {
		return nil
	}
	return append(jsontext.Value(nil), v...)
}

// takeSig seals the waiting reasoning for the part about to be written
// ("" when none is waiting, or without a signer).
func (w *geminiWriter) takeSig() string {
	if !w.hasSig {
		return ""
	}
	r := w.sig
	w.sig, w.hasSig = sealedReasoning{}, false
	if w.p.signer == nil {
		return ""
	}
	return w.p.signer.sealSignature(mustJSON(r))
}

// addSignaturePart writes the waiting reasoning on an empty text part:
// nothing followed it in the answer.
func (w *geminiWriter) addSignaturePart() {
	if sig := w.takeSig(); sig != "" {
		w.addPart(append(jsonx.AppendQuote(append([]byte(nil), `{"text":"","thoughtSignature":`...), sig), '}'))
	}
}

func (w *geminiWriter) toolStart(k int, id, name string) {
	if len(w.calls) >= maxToolCalls || w.call(k) >= 0 {
		return
	}
	w.calls = append(w.calls, geminiCall{k: k, id: strings.Clone(id), name: strings.Clone(name)})
}

func (w *geminiWriter) toolArgs(k int, frag, _ string) {
	if i := w.call(k); i >= 0 {
		w.calls[i].args = append(w.calls[i].args, frag...)
	}
}

func (w *geminiWriter) toolEnd(k int) {
	if i := w.call(k); i >= 0 {
		c := w.calls[i]
		w.calls = append(w.calls[:i], w.calls[i+1:]...)
		w.writeCall(c)
	}
}

func (w *geminiWriter) call(k int) int {
	for i := range w.calls {
		if w.calls[i].k == k {
			return i
		}
	}
	return -1
}

// writeCall writes a finished call as a functionCall part. Arguments that
// are not a JSON object (cut off by the output bound, or malformed) make
// no call: the finish reason says so.
func (w *geminiWriter) writeCall(c geminiCall) {
	args := jsontext.Value(c.args)
	if len(strings.TrimSpace(string(args))) == 0 {
		args = jsontext.Value("{}")
	} else if args.Compact() != nil || args.Kind() != '{' {
		w.malformed = true
		return
	}
	w.flushText()
	b := append([]byte(nil), `{"functionCall":{`...)
	if c.id != "" {
		b = jsonx.AppendQuote(append(b, `"id":`...), c.id)
		b = append(b, ',')
	}
	b = jsonx.AppendQuote(append(b, `"name":`...), w.p.clientToolName(c.name))
	b = append(append(append(b, `,"args":`...), args...), '}')
	if sig := w.takeSig(); sig != "" {
		b = jsonx.AppendQuote(append(b, `,"thoughtSignature":`...), sig)
	}
	w.addPart(append(b, '}'))
}

func (w *geminiWriter) usage(u meter.Usage) { w.use, w.gotUse = u, true }

// flushText ends the pending text part.
func (w *geminiWriter) flushText() {
	if w.textKind == pendingNone {
		return
	}
	b := append(w.partSep(), `{"text":"`...)
	b = append(append(b, w.pending...), '"')
	if w.textKind == pendingThought {
		b = append(b, `,"thought":true`...)
	}
	if w.textSig != "" {
		b = jsonx.AppendQuote(append(b, `,"thoughtSignature":`...), w.textSig)
	}
	w.parts = append(b, '}')
	w.pending, w.textKind, w.textSig = w.pending[:0], pendingNone, ""
}

// partSep returns the parts with the comma that a next part needs.
func (w *geminiWriter) partSep() []byte {
	if len(w.parts) > 0 {
		return append(w.parts, ',')
	}
	return w.parts
}

func (w *geminiWriter) addPart(part []byte) { w.parts = append(w.partSep(), part...) }

// finish ends the answer: the calls still open, the text, the reasoning
// nothing followed, then the finish reason and the usage.
func (w *geminiWriter) finish(stop answerStop) {
	if w.state >= stateDone {
		return
	}
	w.begin("")
	for len(w.calls) > 0 {
		c := w.calls[0]
		w.calls = w.calls[1:]
		w.writeCall(c)
	}
	w.flushText()
	w.addSignaturePart()
	reason := gemini.FinishStop
	switch {
	case stop == stopMaxTokens:
		reason = gemini.FinishMaxTokens
	case stop == stopRefusal:
		reason = gemini.FinishSafety
	case w.malformed:
		reason = gemini.FinishMalformedFunctionCall
	}
	if w.whole {
		w.out = w.appendResponse(w.out[:0], reason)
	} else {
		w.out = append(w.appendResponse(append(w.out, "data: "...), reason), sseEnd...)
	}
	w.state = stateDone
}

// fail ends the stream as Google's servers end one that fails: what was
// made so far, then an event holding an error object.
func (w *geminiWriter) fail(e answerError) {
	if w.state >= stateDone {
		return
	}
	w.flushEvent()
	_, body, _ := geminiError(e)
	w.out = append(append(append(w.out, "data: "...), body...), sseEnd...)
	w.state = stateFailed
}

// flushEvent writes the parts made so far as one stream event.
func (w *geminiWriter) flushEvent() {
	w.flushText()
	if len(w.parts) > 0 {
		w.begin("") // the id, if the upstream never named its answer
		w.out = append(w.appendResponse(append(w.out, "data: "...), ""), sseEnd...)
	}
}

func (w *geminiWriter) take() []byte {
	if w.state < stateDone {
		w.flushEvent()
	}
	b := w.out
	w.out = w.out[:0]
	return b
}

func (w *geminiWriter) ended() (bool, bool) { return w.state >= stateDone, w.state == stateDone }

func (w *geminiWriter) errorAnswer(e answerError) (int, []byte, bool) { return geminiError(e) }

// appendResponse appends a GenerateContentResponse holding the parts made
// since the last (which it takes), the finish reason ("" none yet), the
// usage so far, the model and the response id.
func (w *geminiWriter) appendResponse(b []byte, finish string) []byte {
	b = append(b, `{"candidates":[{"content":{"parts":[`...)
	if len(w.parts) == 0 {
		b = append(b, `{"text":""}`...)
	}
	b = append(b, w.parts...)
	w.parts = w.parts[:0]
	b = append(b, `],"role":"model"}`...)
	if finish != "" {
		b = append(append(append(b, `,"finishReason":"`...), finish...), '"')
	}
	b = append(b, `,"index":0}],"usageMetadata":`...)
	u := w.use
	if !w.gotUse {
		u = meter.Usage{Input: w.p.InputEstimate}
	}
	b = appendGeminiUsage(b, u)
	b = jsonx.AppendQuote(append(b, `,"modelVersion":`...), w.p.AnswerModel)
	b = jsonx.AppendQuote(append(b, `,"responseId":`...), w.id)
	return append(b, '}')
}

// appendGeminiUsage appends usage as usageMetadata: promptTokenCount
// counts every input token, cached ones (cachedContentTokenCount)
// included; candidatesTokenCount leaves out the thoughts
// (thoughtsTokenCount), which the other buckets count as output. Counts of
// zero are left out, as Google leaves them out.
func appendGeminiUsage(b []byte, u meter.Usage) []byte {
	prompt := u.TotalInput()
	thoughts := min(u.Reasoning, u.Output)
	candidates := u.Output - thoughts
	b = strconv.AppendInt(append(b, `{"promptTokenCount":`...), prompt, 10)
	if candidates > 0 {
		b = strconv.AppendInt(append(b, `,"candidatesTokenCount":`...), candidates, 10)
	}
	if u.CacheRead > 0 {
		b = strconv.AppendInt(append(b, `,"cachedContentTokenCount":`...), u.CacheRead, 10)
	}
	if thoughts > 0 {
		b = strconv.AppendInt(append(b, `,"thoughtsTokenCount":`...), thoughts, 10)
	}
	b = strconv.AppendInt(append(b, `,"totalTokenCount":`...), prompt+u.Output, 10)
	return append(b, '}')
}

// geminiError renders an error in Google's envelope, {"error":{"code",
// "message", "status"}}: the HTTP statuses Google does not use become the
// nearest it does (an overloaded upstream's 529 is UNAVAILABLE, 503). A
// rate limit the upstream said when to retry gets a google.rpc.RetryInfo
// detail, which Gemini clients wait on.
func geminiError(e answerError) (int, []byte, bool) {
	code, status := gemini.Status(e.status)
	b := strconv.AppendInt(append([]byte(nil), `{"error":{"code":`...), int64(code), 10)
	b = jsonx.AppendQuote(append(b, `,"message":`...), cmpOr(e.message, "upstream error"))
	b = append(append(append(b, `,"status":"`...), status...), '"')
	if code == 429 && e.retry != "" {
		b = append(b, `,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":`...)
		b = append(jsonx.AppendQuote(b, e.retry), "}]"...)
	}
	return code, append(b, "}}"...), e.noRetry
}

// geminiAnswer translates a whole upstream answer, read by read, into a
// Gemini answer, or for a stream request, a stream of one event holding
// it.
func geminiAnswer(body []byte, p *Plan, read func([]byte, *Plan, answerWriter) (meter.Usage, error)) (out, stream []byte, u meter.Usage, err error) {
	w := newGeminiWriter(p, true)
	if u, err = read(body, p, w); err != nil {
		return nil, nil, u, err
	}
	if p.Stream {
		return nil, append(append([]byte("data: "), w.out...), sseEnd...), u, nil
	}
	return w.out, nil, u, nil
}
