package translate

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// What the pairs of Chat Completions and Messages clients on a Responses
// upstream share: reading its answers and its event stream. The client's
// stream is written by the writers of other pairs (ChatToMessagesStream's
// for Messages clients, MessagesToChatStream's for Chat clients), whose
// grammars are already tested and fuzzed.

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
	responses.SetUsage(&u, r.Get("usage").Raw)
	if r.Get("object").Str != "response" || !r.Get("output").IsArray() {
		return r, u, &UpstreamError{Message: "upstream answer is not a valid response"}
	}
	if r.Get("status").Str == responses.StatusFailed {
		return r, u, &UpstreamError{Message: "upstream response failed: " + r.Get("error.message").Str}
	}
	return r, u, nil
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
		responses.SetUsage(&r.usage, d.Get("response.usage").Raw)
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
