package translate

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// Answers of a Responses upstream for Chat Completions and Messages
// clients. The streams are read here and written by the writers of the
// other pairs (ChatToMessagesStream's for Anthropic clients,
// MessagesToChatStream's for OpenAI clients), whose grammars are already
// tested and fuzzed.

// ResponsesErrorEvent reads an error a Responses stream opens with (an
// error event, flat as documented or nested as the live API sends it, or
// response.failed) into its status and an OpenAI error body.
func ResponsesErrorEvent(data []byte) (int, []byte, bool) {
	d := gjson.ParseBytes(data)
	switch d.Get("type").Str {
	case "error":
		e := d.Get("error")
		if !e.IsObject() {
			e = d
		}
		typ, code := e.Get("type").Str, e.Get("code").String()
		if typ == "" || typ == "error" {
			typ = openai.ErrServer
		}
		return openai.StatusForError(typ, code), openai.MarshalError(typ, cmpOr(e.Get("message").Str, "upstream error"), e.Get("param").Str, code), true
	case "response.failed":
		e := d.Get("response.error")
		code := e.Get("code").String()
		return openai.StatusForError("", code), openai.MarshalError(openai.ErrServer, cmpOr(e.Get("message").Str, "upstream response failed"), "", code), true
	}
	return 0, nil, false
}

// sealItem is what carries a Responses reasoning item through an Anthropic
// client: its JSON, sealed, as a thinking block's signature (or a redacted
// block's data).
func (p *Plan) sealItem(item []byte) string {
	if p.signer == nil {
		return ""
	}
	v := jsontext.Value(append([]byte(nil), item...))
	v.Compact()
	return p.signer.seal(v)
}

// responsesStop is the Anthropic stop reason of a finished response.
func responsesStop(r gjson.Result, tools bool) string {
	if r.Get("status").Str == responses.StatusIncomplete {
		switch r.Get("incomplete_details.reason").Str {
		case "content_filter":
			return anthropic.StopRefusal
		default:
			return anthropic.StopMaxTokens
		}
	}
	if tools {
		return anthropic.StopToolUse
	}
	return anthropic.StopEndTurn
}

// summaryText joins a reasoning item's summary (or its reasoning text).
func summaryText(item gjson.Result) string {
	var parts []string
	for _, k := range [...]string{"summary", "content"} {
		for _, s := range item.Get(k).Array() {
			if t := s.Get("text").Str; t != "" {
				parts = append(parts, t)
			}
		}
		if len(parts) > 0 {
			break
		}
	}
	return strings.Join(parts, "\n\n")
}

// responseBody decodes a whole Responses answer; a failed one is an
// *UpstreamError.
func responseBody(body []byte) (gjson.Result, meter.Usage, error) {
	var u meter.Usage
	if !gjson.ValidBytes(body) {
		return gjson.Result{}, u, &UpstreamError{Message: "upstream answer is not a valid response"}
	}
	r := gjson.ParseBytes(body)
	u.SetResponses(r.Get("usage").Raw)
	if r.Get("object").Str != "response" || !r.Get("output").IsArray() {
		return r, u, &UpstreamError{Message: "upstream answer is not a valid response"}
	}
	if r.Get("status").Str == responses.StatusFailed {
		return r, u, &UpstreamError{Message: "upstream response failed: " + r.Get("error.message").Str}
	}
	return r, u, nil
}

// ResponsesAnswerToMessages translates a whole Responses answer into a
// Messages answer (or, for a stream request, its events). Reasoning items
// become thinking blocks whose signature seals the item (redacted thinking
// when the item has no summary), so the next turn gives it back.
func ResponsesAnswerToMessages(body []byte, p *Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
	r, u, err := responseBody(body)
	if err != nil {
		return nil, nil, u, err
	}
	msg := anthropic.Response{ID: "msg_" + base62(24), Type: "message", Role: "assistant", Model: p.AnswerModel, Content: []anthropic.Block{}}
	tools := false
	for _, it := range r.Get("output").Array() {
		switch it.Get("type").Str {
		case "reasoning":
			text := summaryText(it)
			if text == "" {
				msg.Content = append(msg.Content, anthropic.Block{Type: "redacted_thinking", Data: p.sealItem([]byte(it.Raw))})
			} else {
				msg.Content = append(msg.Content, anthropic.Block{Type: "thinking", Thinking: text, Signature: p.sealItem([]byte(it.Raw))})
			}
		case "message":
			for _, c := range it.Get("content").Array() {
				text := c.Get("text").Str
				if c.Get("type").Str == "refusal" {
					text = c.Get("refusal").Str
				}
				if text != "" {
					msg.Content = append(msg.Content, anthropic.Block{Type: "text", Text: text})
				}
			}
		case "function_call", "custom_tool_call":
			if it.Get("name").Str == "" {
				return nil, nil, u, &UpstreamError{Message: errNamelessCall}
			}
			input, ok := parseArguments(callArguments(it))
			if !ok {
				input = jsontext.Value("{}")
			}
			tools = true
			msg.Content = append(msg.Content, anthropic.Block{Type: "tool_use", ID: sanitizeID(it.Get("call_id").Str),
				Name: p.clientToolName(it.Get("name").Str), Input: input})
		}
		// Hosted tools' items ran upstream: not the client's to run.
	}
	stop := responsesStop(r, tools)
	msg.StopReason = &stop
	msg.Usage = mustJSON(anthropicUsage(u))
	if p.Stream {
		return nil, MessagesStream(&msg), u, nil
	}
	out, err = jsonx.Marshal(msg)
	return out, nil, u, err
}

// ResponsesAnswerToChat translates a whole Responses answer into a chat
// completion (or, for a stream request, its chunks).
func ResponsesAnswerToChat(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	r, u, err := responseBody(body)
	if err != nil {
		return nil, nil, u, err
	}
	var text, reasoning strings.Builder
	m := openai.ChatMessage{Role: "assistant"}
	refused := false
	for _, it := range r.Get("output").Array() {
		switch it.Get("type").Str {
		case "reasoning":
			if reasoning.Len() > 0 {
				reasoning.WriteString("\n\n")
			}
			reasoning.WriteString(summaryText(it))
		case "message":
			for _, c := range it.Get("content").Array() {
				if c.Get("type").Str == "refusal" {
					refused = true
					text.WriteString(c.Get("refusal").Str)
					continue
				}
				text.WriteString(c.Get("text").Str)
			}
		case "function_call", "custom_tool_call":
			if it.Get("name").Str == "" {
				return nil, nil, u, &UpstreamError{Message: errNamelessCall}
			}
			args := callArguments(it)
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: it.Get("call_id").Str, Type: "function",
				Function: openai.FunctionCall{Name: p.clientToolName(it.Get("name").Str), Arguments: args}})
		}
	}
	m.Content = openai.MessageContent{Null: true}
	if text.Len() > 0 {
		m.Content = textContent(text.String())
	}
	m.ReasoningContent = reasoning.String()
	stop := responsesStop(r, len(m.ToolCalls) > 0)
	if refused {
		stop = anthropic.StopRefusal
	}
	finish := finishReason(stop, false)
	usage, _ := jsonx.Marshal(openAIUsage(u))
	c := &openai.Completion{ID: chatID(r.Get("id").Str), Object: "chat.completion", Created: created, Model: p.AnswerModel,
		Choices: []openai.Choice{{Message: m, Logprobs: jsontext.Value("null"), FinishReason: &finish}}, Usage: usage}
	if p.Stream {
		return nil, ChatStream(c, p), u, nil
	}
	out, err = jsonx.Marshal(c)
	return out, nil, u, err
}

// rsReader reads a Responses upstream's events: their name (the event:
// line, or data.type) and data, and the usage of the terminal event.
type rsReader struct {
	f        sse.Fields
	usage    meter.Usage
	open     string // the type of the item being streamed
	argsSeen bool   // the open function call had argument deltas
	summary  int64  // the open reasoning item's last summary index
	tools    bool   // a function call was streamed
	started  bool   // the open call was started for the client
}

// isCall reports whether an output item is a function or custom tool call.
func isCall(it gjson.Result) bool {
	t := it.Get("type").Str
	return t == "function_call" || t == "custom_tool_call"
}

// callArguments is a finished call's arguments: a custom tool's input is
// given to the client's function as {"input": …}.
func callArguments(it gjson.Result) string {
	if it.Get("type").Str == "custom_tool_call" {
		return string(mustJSON(map[string]string{"input": it.Get("input").Str}))
	}
	return it.Get("arguments").Str
}

// errNamelessCall ends a stream whose upstream sent a call it never named.
const errNamelessCall = "the upstream sent a tool call without a function name"

func (r *rsReader) read(ev []byte) (string, gjson.Result, bool) {
	r.f.Parse(ev)
	if r.f.Data == nil {
		return "", gjson.Result{}, false
	}
	d := gjson.Parse(unsafeString(r.f.Data))
	if !d.IsObject() {
		return "", gjson.Result{}, false
	}
	name := d.Get("type").Str
	if name == "" {
		name = unsafeString(r.f.Name)
	}
	switch name {
	case "response.output_item.added":
		r.open, r.argsSeen, r.started, r.summary = strings.Clone(d.Get("item.type").Str), false, false, -1
	case "response.function_call_arguments.delta":
		r.argsSeen = true
	case "response.completed", "response.incomplete":
		r.usage.SetResponses(d.Get("response.usage").Raw)
	}
	return name, d, true
}

// summaryBreak reports whether a reasoning delta starts another summary
// part, which the client gets after a blank line.
func (r *rsReader) summaryBreak(d gjson.Result) bool {
	i := d.Get("summary_index").Int()
	brk := r.summary >= 0 && i != r.summary
	r.summary = i
	return brk
}

// ResponsesToMessagesStream turns a Responses upstream's events into
// Messages events for an Anthropic client.
type ResponsesToMessagesStream struct {
	w  ChatToMessagesStream // the writer; its Feed is not used
	in rsReader
}

// NewResponsesToMessagesStream starts a translated stream for p.
func NewResponsesToMessagesStream(p *Plan) *ResponsesToMessagesStream {
	return &ResponsesToMessagesStream{w: ChatToMessagesStream{p: p}}
}

// Usage is the usage the upstream reported.
func (s *ResponsesToMessagesStream) Usage() meter.Usage { return s.in.usage }

// StartError reports whether ev, the upstream's first event, is an error;
// if so it returns the status and Anthropic error body to answer with.
func (s *ResponsesToMessagesStream) StartError(ev []byte) (int, []byte, bool) {
	s.in.f.Parse(ev)
	status, body, ok := ResponsesErrorEvent(s.in.f.Data)
	if !ok {
		return 0, nil, false
	}
	status, body = OpenAIErrorToAnthropic(status, body)
	return status, body, true
}

var paragraph = gjson.Parse(`"\n\n"`)

// Feed takes one complete upstream event and returns the client's events.
func (s *ResponsesToMessagesStream) Feed(ev []byte) []byte {
	w := &s.w
	w.out = w.out[:0]
	if w.state >= stateDone {
		return nil
	}
	name, d, ok := s.in.read(ev)
	if !ok {
		return nil
	}
	if _, body, failed := ResponsesErrorEvent(s.in.f.Data); failed {
		_, body = OpenAIErrorToAnthropic(0, body)
		w.fail(body)
		return w.out
	}
	w.begin()
	switch name {
	case "response.output_item.added":
		if it := d.Get("item"); isCall(it) && it.Get("name").Str != "" {
			s.startCall(it)
		}
	case "response.output_text.delta", "response.refusal.delta":
		if t := d.Get("delta"); t.Str != "" {
			w.refused = w.refused || name == "response.refusal.delta"
			w.text(quotedRaw(t))
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if t := d.Get("delta"); t.Str != "" {
			if s.in.summaryBreak(d) && w.open == blockThinking {
				w.reasoning(paragraph)
			}
			w.reasoning(t)
		}
	case "response.function_call_arguments.delta":
		if t := d.Get("delta"); w.live != nil && t.Str != "" && s.in.started {
			w.live.args = append(w.live.args, t.Str...)
			w.delta(`{"type":"input_json_delta","partial_json":`, quotedRaw(t))
		}
	case "response.output_item.done":
		s.itemDone(d.Get("item"))
	case "response.completed", "response.incomplete":
		w.usage, w.gotUse = s.in.usage, true
		w.finish = openai.FinishStop
		switch responsesStop(d.Get("response"), false) {
		case anthropic.StopMaxTokens:
			w.finish = openai.FinishLength
		case anthropic.StopRefusal:
			w.finish = openai.FinishContentFilter
		}
		w.finalize()
	}
	return w.out
}

// startCall opens a tool_use block for a call.
func (s *ResponsesToMessagesStream) startCall(it gjson.Result) {
	w := &s.w
	if w.open != blockNone {
		w.stopOpen()
	}
	t := &toolSlot{key: len(w.tools), id: cmpOr(strings.Clone(it.Get("call_id").Str), "toolu_"+randomHex(12)), name: strings.Clone(it.Get("name").Str)}
	w.tools = append(w.tools, t)
	w.startTool(t)
	s.in.started = true
}

// itemDone ends the item's block: a thinking block gets the sealed item as
// its signature; a call's arguments sent only whole (no deltas) go now.
func (s *ResponsesToMessagesStream) itemDone(it gjson.Result) {
	w := &s.w
	switch it.Get("type").Str {
	case "reasoning":
		seal := s.w.p.sealItem([]byte(it.Raw))
		if w.open == blockThinking {
			w.sig = seal
			w.stopOpen()
		} else if it.Get("encrypted_content").Str != "" {
			// Reasoning with no text to show: the item travels as redacted thinking.
			w.closeTools()
			w.startRaw(append(append([]byte(`{"type":"redacted_thinking","data":`), jsonx.AppendQuote(nil, seal)...), '}'))
			w.stopBlock(w.next - 1)
		}
	case "function_call", "custom_tool_call":
		if !s.in.started { // named only now, or not at all
			if it.Get("name").Str == "" {
				w.fail(anthropic.MarshalError(anthropic.ErrAPI, errNamelessCall, ""))
				return
			}
			s.startCall(it)
		}
		t := w.live
		if t == nil {
			return
		}
		if !s.in.argsSeen || it.Get("type").Str == "custom_tool_call" {
			if args := callArguments(it); args != "" {
				w.delta(`{"type":"input_json_delta","partial_json":`, string(jsonx.AppendQuote(nil, args)))
			}
		}
		w.stopBlock(w.openIdx)
		t.state, w.live = toolClosed, nil
	case "message":
		if w.open != blockNone {
			w.stopOpen()
		}
	}
}

// Close ends the stream when the upstream's body ends or fails before its
// terminal event: an error event, never a made-up end.
func (s *ResponsesToMessagesStream) Close(eof bool, msg string) ([]byte, bool) {
	return s.w.Close(eof, msg)
}

// ResponsesToChatStream turns a Responses upstream's events into Chat
// Completions chunks for an OpenAI client.
type ResponsesToChatStream struct {
	w     MessagesToChatStream // the writer; its Feed is not used
	in    rsReader
	calls int // tool calls so far: the next one's index
}

// NewResponsesToChatStream starts a translated stream for p.
func NewResponsesToChatStream(p *Plan, created int64) *ResponsesToChatStream {
	return &ResponsesToChatStream{w: MessagesToChatStream{p: p, chatChunks: chatChunks{created: created}}}
}

// Usage is the usage the upstream reported.
func (s *ResponsesToChatStream) Usage() meter.Usage { return s.in.usage }

// StartError reports whether ev, the upstream's first event, is an error;
// if so it returns the status and OpenAI error body to answer with.
func (s *ResponsesToChatStream) StartError(ev []byte) (int, []byte, bool) {
	s.in.f.Parse(ev)
	return ResponsesErrorEvent(s.in.f.Data)
}

// Feed takes one complete upstream event and returns the client's chunks.
func (s *ResponsesToChatStream) Feed(ev []byte) []byte {
	w := &s.w
	w.out = w.out[:0]
	if w.state >= stateDone {
		return nil
	}
	name, d, ok := s.in.read(ev)
	if !ok {
		return nil
	}
	if _, body, failed := ResponsesErrorEvent(s.in.f.Data); failed {
		w.fail(body)
		return w.out
	}
	w.begin(d.Get("response.id").Str) // response.created comes first
	switch name {
	case "response.output_item.added":
		if it := d.Get("item"); isCall(it) && it.Get("name").Str != "" {
			s.startCall(it)
		}
	case "response.output_text.delta":
		if t := d.Get("delta"); t.Str != "" {
			w.chunkRaw(`{"content":`, quotedRaw(t), `}`)
		}
	case "response.refusal.delta":
		if t := d.Get("delta"); t.Str != "" {
			w.chunkRaw(`{"refusal":`, quotedRaw(t), `}`)
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if t := d.Get("delta"); t.Str != "" {
			if s.in.summaryBreak(d) {
				w.chunk(`{"reasoning_content":"\n\n"}`)
			}
			w.chunkRaw(`{"reasoning_content":`, quotedRaw(t), `}`)
		}
	case "response.function_call_arguments.delta":
		if t := d.Get("delta"); t.Str != "" && s.in.started {
			s.arguments(quotedRaw(t))
		}
	case "response.output_item.done":
		it := d.Get("item")
		if !isCall(it) {
			break
		}
		if !s.in.started { // named only now, or not at all
			if it.Get("name").Str == "" {
				w.fail(openai.MarshalError(openai.ErrServer, errNamelessCall, "", "upstream_invalid_response"))
				return w.out
			}
			s.startCall(it)
		}
		if !s.in.argsSeen || it.Get("type").Str == "custom_tool_call" {
			if args := callArguments(it); args != "" {
				s.arguments(string(jsonx.AppendQuote(nil, args)))
			}
		}
	case "response.completed", "response.incomplete":
		w.usage = s.in.usage
		w.stop = responsesStop(d.Get("response"), s.in.tools)
		w.finalize()
	}
	return w.out
}

// startCall sends a tool call's first fragment: its index, id and name.
func (s *ResponsesToChatStream) startCall(it gjson.Result) {
	b := []byte(`{"tool_calls":[{"index":`)
	b = appendInt(b, s.calls)
	b = append(b, `,"id":`...)
	b = jsonx.AppendQuote(b, cmpOr(it.Get("call_id").Str, "call_"+randomHex(12)))
	b = append(b, `,"type":"function","function":{"name":`...)
	b = jsonx.AppendQuote(b, s.w.p.clientToolName(it.Get("name").Str))
	s.w.chunk(string(append(b, `,"arguments":""}}]}`...)))
	s.calls++
	s.in.tools, s.in.started = true, true
}

// arguments sends a fragment of the current tool call's arguments.
func (s *ResponsesToChatStream) arguments(quoted string) {
	pre := `{"tool_calls":[{"index":` + string(appendInt(nil, s.calls-1)) + `,"function":{"arguments":`
	s.w.chunkRaw(pre, quoted, `}}]}`)
}

// Close ends the stream when the upstream's body ends or fails before its
// terminal event: an error chunk and no [DONE].
func (s *ResponsesToChatStream) Close(eof bool, msg string) ([]byte, bool) {
	return s.w.Close(eof, msg)
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
