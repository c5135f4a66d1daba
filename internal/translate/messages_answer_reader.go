package translate

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/meter"
)

// messagesReader reads an Anthropic Messages answer, whole or streamed,
// into answer events. Each thinking or redacted_thinking block is
// reasoning whose sealed form is the block as Claude sent it (a streamed
// one rebuilt from its deltas), which Claude needs back verbatim. Server
// tools ran upstream and are not the client's to run: left out. The
// structured-output tool's input (Plan.JSONTool) is answer text.
type messagesReader struct {
	p       *Plan
	blocks  []messagesBlock // the kind of each block, by the upstream's index
	thought []byte          // the open thinking block's text
	sig     []byte          // and its signature
	stop    string
	use     meter.Usage
}

// messagesBlock is what an upstream content block is read as.
type messagesBlock uint8

const (
	mbIgnored messagesBlock = iota
	mbText
	mbThinking
	mbTool
	mbJSON
)

// readMessagesAnswer reads a whole Messages answer into w.
func readMessagesAnswer(body []byte, p *Plan, w answerWriter) (meter.Usage, error) {
	var u meter.Usage
	if !gjson.ValidBytes(body) {
		return u, &UpstreamError{Message: "upstream answer is not a valid message"}
	}
	m := gjson.ParseBytes(body)
	if m.Get("type").Str != "message" {
		return u, &UpstreamError{Message: "upstream answer is not a valid message"}
	}
	r := &messagesReader{p: p}
	anthropic.MergeUsage(&r.use, m.Get("usage").Raw)
	w.begin(m.Get("id").Str)
	for i, b := range m.Get("content").Array() {
		if i >= maxContentBlocks {
			break
		}
		index := gjson.Result{Type: gjson.Number, Num: float64(i), Raw: strconv.Itoa(i)}
		r.blockStart(index, b, w) // a whole block is its own start
		r.blockStop(i, w)
	}
	w.usage(r.use)
	w.finish(messagesStop(m.Get("stop_reason").Str))
	return r.use, nil
}

func (r *messagesReader) usage() meter.Usage { return r.use }

func (r *messagesReader) startError(name, data []byte) (answerError, bool) {
	n := unsafeString(name)
	if n == "" {
		n = gjson.GetBytes(data, "type").Str
	}
	if n != "error" {
		return answerError{}, false
	}
	return anthropicAnswerError(0, data), true
}

func (r *messagesReader) event(name, data []byte, w answerWriter) {
	d := unsafeString(data)
	n := unsafeString(name)
	if n == "" {
		n = gjson.Get(d, "type").Str
	}
	switch n {
	case "message_start":
		anthropic.MergeEventUsage(&r.use, n, d)
		w.begin(gjson.Get(d, "message.id").Str)
		w.usage(r.use)
	case "content_block_start":
		w.begin("")
		r.blockStart(gjson.Get(d, "index"), gjson.Get(d, "content_block"), w)
	case "content_block_delta":
		w.begin("")
		r.blockDelta(int(gjson.Get(d, "index").Int()), gjson.Get(d, "delta"), w)
	case "content_block_stop":
		r.blockStop(int(gjson.Get(d, "index").Int()), w)
	case "message_delta":
		if s := gjson.Get(d, "delta.stop_reason"); s.Type == gjson.String {
			r.stop = strings.Clone(s.Str) // the event's bytes are reused after Feed
		}
		anthropic.MergeEventUsage(&r.use, n, d) // cumulative; only present fields overwrite
		w.usage(r.use)
	case "message_stop":
		w.begin("")
		w.finish(messagesStop(r.stop))
	case "error":
		w.fail(anthropicAnswerError(0, data))
	}
	// ping and unknown events carry nothing for the client.
}

// close fails the answer: a Messages stream ends with message_stop.
func (r *messagesReader) close(_ bool, msg string, w answerWriter) {
	w.fail(answerError{status: 500, message: msg})
}

func (r *messagesReader) blockStart(index, block gjson.Result, w answerWriter) {
	i := int(index.Int())
	if !index.Exists() || i < 0 || i >= maxContentBlocks {
		return
	}
	for len(r.blocks) <= i {
		r.blocks = append(r.blocks, mbIgnored)
	}
	switch block.Get("type").Str {
	case "text":
		r.blocks[i] = mbText
		if t := block.Get("text"); t.Type == gjson.String && t.Str != "" {
			w.text(t.Str, quotedRaw(t))
		}
	case "thinking":
		r.blocks[i] = mbThinking
		t := block.Get("thinking")
		r.thought = append(r.thought[:0], t.Str...)
		r.sig = append(r.sig[:0], block.Get("signature").Str...)
		if t.Type == gjson.String && t.Str != "" {
			w.thinking(t.Str, quotedRaw(t))
		}
	case "redacted_thinking":
		w.reasoning(sealedReasoning{Blocks: mustJSON([]anthropic.Block{{Type: "redacted_thinking", Data: block.Get("data").Str}})})
	case "tool_use":
		name := block.Get("name").Str
		in := block.Get("input")
		if r.p.JSONTool && name == jsonToolName {
			r.blocks[i] = mbJSON
			if nonEmptyObject(in) { // a whole answer, or a synthetic stream
				text := jsontext.Value(in.Raw).Clone()
				text.Compact()
				w.text(string(text), quote(string(text)))
			}
			return
		}
		if name == "" {
			return // a call without a name cannot be made
		}
		r.blocks[i] = mbTool
		w.toolStart(i, block.Get("id").Str, name)
		if nonEmptyObject(in) {
			w.toolArgs(i, in.Raw, quote(in.Raw))
		}
	}
}

func (r *messagesReader) blockDelta(i int, d gjson.Result, w answerWriter) {
	if i < 0 || i >= len(r.blocks) {
		return // a delta for a block never started
	}
	var v gjson.Result
	switch d.Get("type").Str {
	case "text_delta":
		if v = d.Get("text"); r.blocks[i] == mbText && v.Type == gjson.String && v.Str != "" {
			w.text(v.Str, quotedRaw(v))
		}
	case "thinking_delta":
		if v = d.Get("thinking"); r.blocks[i] == mbThinking && v.Type == gjson.String && v.Str != "" {
			r.thought = append(r.thought, v.Str...)
			w.thinking(v.Str, quotedRaw(v))
		}
	case "signature_delta":
		if r.blocks[i] == mbThinking {
			r.sig = append(r.sig, d.Get("signature").Str...)
		}
	case "input_json_delta":
		if v = d.Get("partial_json"); v.Type != gjson.String || v.Str == "" {
			return
		}
		switch r.blocks[i] {
		case mbTool:
			w.toolArgs(i, v.Str, quotedRaw(v))
		case mbJSON:
			w.text(v.Str, quotedRaw(v))
		}
	}
	// citations_delta and unknown deltas carry nothing for the client.
}

// blockStop ends block i: a thinking block is complete reasoning now, a
// tool_use block a complete call.
func (r *messagesReader) blockStop(i int, w answerWriter) {
	if i < 0 || i >= len(r.blocks) {
		return
	}
	switch r.blocks[i] {
	case mbThinking:
		b := anthropic.Block{Type: "thinking", Thinking: string(r.thought), Signature: string(r.sig)}
		w.reasoning(sealedReasoning{Blocks: mustJSON([]anthropic.Block{b})})
	case mbTool:
		w.toolEnd(i)
	}
	r.blocks[i] = mbIgnored // stopped once
}

// nonEmptyObject reports whether r is a JSON object with members.
func nonEmptyObject(r gjson.Result) bool {
	return r.IsObject() && len(r.Raw) >= 2 && strings.TrimSpace(r.Raw[1:len(r.Raw)-1]) != ""
}

// messagesStop reads an Anthropic stop_reason.
func messagesStop(stop string) answerStop {
	switch stop {
	case anthropic.StopMaxTokens, anthropic.StopContextWindow:
		return stopMaxTokens
	case anthropic.StopRefusal:
		return stopRefusal
	case anthropic.StopToolUse:
		return stopToolUse
	}
	return stopEnd // end_turn, stop_sequence, pause_turn, unknown
}

// anthropicAnswerError reads an Anthropic error (status 0: a stream's
// error event, whose type says the status). The upstream refusing the
// gateway's credential or account is a 502 no retry fixes: the client's
// own key was fine.
func anthropicAnswerError(status int, body []byte) answerError {
	typ := gjson.GetBytes(body, "error.type").String()
	e := answerError{status: status, message: errorMessage(body, "error.message")}
	if status == 0 {
		e.status = anthropic.StatusForErrorType(typ)
	}
	switch {
	case e.status == 401 || typ == anthropic.ErrAuthentication:
		e.status, e.noRetry = 502, true
		e.message = "upstream rejected the gateway's credential: " + e.message
	case e.status == 402 || typ == anthropic.ErrBilling:
		e.status, e.noRetry = 502, true
		e.message = "upstream billing error: " + e.message
	case typ == anthropic.ErrOverloaded:
		e.status = 529
	}
	e.retry = retryDelay(e.message)
	return e
}

// retryAfterRE finds when an error message says to retry ("Please try
// again in 20s", "in 1.5 seconds", "in 120ms").
var retryAfterRE = regexp.MustCompile(`(?i)(?:try again|retry) (?:in|after) (\d+(?:\.\d+)?) ?(ms|milliseconds?|s|seconds?|m|minutes?)\b`)

// retryDelay is when msg says to retry, as a google.protobuf.Duration
// ("20s"); "" when it does not say.
func retryDelay(msg string) string {
	m := retryAfterRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return ""
	}
	switch unit := strings.ToLower(m[2]); {
	case strings.HasPrefix(unit, "ms"), strings.HasPrefix(unit, "milli"):
		n /= 1000
	case strings.HasPrefix(unit, "m"):
		n *= 60
	}
	return strconv.FormatFloat(n, 'f', -1, 64) + "s"
}
