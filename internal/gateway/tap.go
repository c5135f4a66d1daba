package gateway

import (
	"bytes"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// streamTap watches a relayed stream event by event: it reads usage without
// re-encoding the bytes, notices the stream's final event, and may drop or
// replace an event. It is created per stream and is not safe for concurrent
// use. It must not allocate per event on the common path.
type streamTap interface {
	// observe inspects one complete event and returns what to send: ev
	// itself (the usual case), a replacement, or nil to drop it.
	observe(ev []byte) []byte
	// startError reports whether ev, the stream's first data event, is an
	// error; if so it returns the HTTP status and JSON body to answer with
	// instead of starting the stream.
	startError(ev []byte) (status int, body []byte, ok bool)
	// finish is called when the upstream body ends (eof) or fails. It
	// returns the bytes that end the client's stream (an error event when
	// the stream did not finish, saying msg) and whether it ended cleanly.
	finish(eof bool, msg string) (tail []byte, clean bool)
	usage() meter.Usage
}

// anthropicTap taps a Messages stream. Usage arrives in message_start
// (input and cache counts) and message_delta (cumulative output, and any
// counts that changed), so fields are merged, never summed.
type anthropicTap struct {
	f    sse.Fields
	u    meter.Usage
	done bool
}

func (t *anthropicTap) observe(ev []byte) []byte {
	t.f.Parse(ev)
	switch string(t.f.Name) {
	case "message_start":
		t.u.MergeAnthropic(gjson.Get(unsafeString(t.f.Data), "message.usage").Raw)
	case "message_delta":
		t.u.MergeAnthropic(gjson.Get(unsafeString(t.f.Data), "usage").Raw)
	case "message_stop", "error":
		t.done = true
	}
	return ev
}

func (t *anthropicTap) startError(ev []byte) (int, []byte, bool) {
	t.f.Parse(ev)
	if string(t.f.Name) != "error" {
		return 0, nil, false
	}
	typ := gjson.Get(unsafeString(t.f.Data), "error.type").String()
	return anthropic.StatusForErrorType(typ), bytes.Clone(t.f.Data), true
}

func (t *anthropicTap) finish(eof bool, msg string) ([]byte, bool) {
	if t.done {
		return nil, true
	}
	return sse.AppendEvent(nil, "error", anthropic.MarshalError(anthropic.ErrAPI, msg, "")), false
}

func (t *anthropicTap) usage() meter.Usage { return t.u }

// openAITap taps a Chat Completions stream. Usage comes in a chunk of its
// own (choices empty) when stream_options.include_usage is set; some
// compatible upstreams put it on the last content chunk instead, or repeat
// running totals on every chunk, so the last usage object wins.
//
// When the client did not ask for usage, the gateway asked for it anyway
// (it meters every request), and strip hides it again: the usage-only chunk
// is dropped, and usage on a content chunk is replaced by null. The
// "usage":null member that upstreams add to every other chunk is left in
// place; clients read it as "no usage".
type openAITap struct {
	f       sse.Fields
	u       meter.Usage
	strip   bool
	done    bool
	scratch []byte
}

func (t *openAITap) observe(ev []byte) []byte {
	t.f.Parse(ev)
	d := t.f.Data
	if d == nil {
		return ev
	}
	if bytes.Equal(d, doneData) {
		t.done = true
		return ev
	}
	if mayHaveUsage(d) {
		if u := gjson.Get(unsafeString(d), "usage"); u.IsObject() {
			t.u.SetOpenAI(u.Raw)
			if t.strip {
				if c := gjson.Get(unsafeString(d), "choices"); !c.Exists() || isEmptyArray(c.Raw) {
					return nil
				}
				nulled, err := sjson.SetRawBytes(bytes.Clone(d), "usage", []byte("null"))
				if err != nil {
					return ev
				}
				t.scratch = sse.AppendEvent(t.scratch[:0], "", nulled)
				return t.scratch
			}
		}
	}
	if bytes.Contains(d, errorKey) && gjson.Get(unsafeString(d), "error").IsObject() {
		t.done = true // an upstream error chunk ends the stream; no [DONE] follows
	}
	return ev
}

func (t *openAITap) startError(ev []byte) (int, []byte, bool) {
	t.f.Parse(ev)
	d := t.f.Data
	if d == nil || !bytes.Contains(d, errorKey) {
		return 0, nil, false
	}
	e := gjson.Get(unsafeString(d), "error")
	if !e.IsObject() {
		return 0, nil, false
	}
	status := 502
	switch e.Get("type").String() {
	case openai.ErrInvalidRequest:
		status = 400
	case openai.ErrRateLimit:
		status = 429
	case openai.ErrServer:
		status = 500
	case openai.ErrUnavailable:
		status = 503
	}
	if c := e.Get("code"); c.Type == gjson.Number {
		if n := int(c.Int()); n >= 400 && n <= 599 {
			status = n
		}
	}
	return status, bytes.Clone(d), true
}

func (t *openAITap) finish(eof bool, msg string) ([]byte, bool) {
	if t.done {
		return nil, true
	}
	return sse.AppendEvent(nil, "", openai.MarshalError(openai.ErrServer, msg, "", "upstream_stream_interrupted")), false
}

func (t *openAITap) usage() meter.Usage { return t.u }

var (
	doneData = []byte("[DONE]")
	errorKey = []byte(`"error"`)
	usageKey = []byte(`"usage"`)
)

// mayHaveUsage is a cheap filter before gjson: it is false only when every
// "usage" member in d is null. With include_usage on, upstreams put
// "usage":null on every chunk, so this spares a parse per chunk.
func mayHaveUsage(d []byte) bool {
	for {
		i := bytes.Index(d, usageKey)
		if i < 0 {
			return false
		}
		d = bytes.TrimLeft(d[i+len(usageKey):], " \t\r\n")
		if len(d) == 0 || d[0] != ':' {
			continue
		}
		d = bytes.TrimLeft(d[1:], " \t\r\n")
		if !bytes.HasPrefix(d, []byte("null")) {
			return true
		}
	}
}

func isEmptyArray(raw string) bool {
	if len(raw) < 2 || raw[0] != '[' {
		return false
	}
	for _, c := range raw[1:] {
		switch c {
		case ' ', '\t', '\r', '\n':
		case ']':
			return true
		default:
			return false
		}
	}
	return false
}

// unsafeString views b as a string without copying; the string and gjson
// results derived from it must not outlive b's current contents.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// hasDataField reports whether an event has a data line.
func hasDataField(ev []byte) bool {
	var f sse.Fields
	f.Parse(ev)
	return f.Data != nil
}
