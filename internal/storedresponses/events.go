package storedresponses

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/sse"
)

// The response objects of answers: the stream's lifecycle events carry
// one each (created, in progress, … and the terminal one), a whole answer
// is one. Each names the response it continues (previous_response_id) as
// the client sent it: an upstream that got the conversation expanded in
// its place does not know it, and neither does the gateway's own
// response.failed that ends a cut stream.

// echo is a whole answer naming the response it continues.
func echo(body []byte, prevID string) []byte {
	if prevID == "" || gjson.GetBytes(body, "previous_response_id").Type == gjson.String || !gjson.ValidBytes(body) {
		return body
	}
	out, err := sjson.SetBytes(body, "previous_response_id", prevID)
	if err != nil {
		return body // not an object: relayed as it came
	}
	return out
}

// lifecycle reports whether an event type carries the response object,
// and whether it is the terminal one.
func lifecycle(typ string) (carries, final bool) {
	switch typ {
	case "response.completed", "response.incomplete", "response.failed":
		return true, true
	case "response.created", "response.queued", "response.in_progress":
		return true, false
	}
	return false, false
}

// eventScanner walks client-bound SSE bytes, rewriting the response
// objects that do not name the response they continue.
type eventScanner struct {
	f   sse.Fields
	buf []byte // the rewritten events, reused
}

// scan calls visit with the response object of each lifecycle event in
// events, as the client gets it, and returns events with those objects
// naming prevID (events itself when none changes).
func (s *eventScanner) scan(events []byte, prevID string, visit func(r []byte, final bool)) []byte {
	// Only lifecycle events carry a response object; a key of that name
	// cannot occur unquoted inside a string, so other events are passed
	// over without being parsed.
	if !bytes.Contains(events, []byte(`"response"`)) {
		return events
	}
	rest, out, changed := events, s.buf[:0], false
	for len(rest) > 0 {
		n := sse.Split(rest)
		if n == 0 {
			out = append(out, rest...)
			break
		}
		ev := rest[:n]
		rest = rest[n:]
		s.f.Parse(ev)
		typ := gjson.GetBytes(s.f.Data, "type").Str
		carries, final := lifecycle(typ)
		if !carries {
			out = append(out, ev...)
			continue
		}
		data := s.f.Data
		// Malformed JSON is relayed as it came: sjson would patch it
		// where its parse happened to stop, differently on each pass.
		if prevID != "" && gjson.GetBytes(data, "response.previous_response_id").Type != gjson.String && gjson.ValidBytes(data) {
			if d, err := sjson.SetBytes(bytes.Clone(data), "response.previous_response_id", prevID); err == nil {
				data, changed = d, true
				out = sse.AppendEvent(out, string(s.f.Name), data)
			} else {
				out = append(out, ev...)
			}
		} else {
			out = append(out, ev...)
		}
		if visit != nil {
			visit([]byte(gjson.GetBytes(data, "response").Raw), final)
		}
	}
	s.buf = out
	if !changed {
		return events
	}
	return out
}

// echoEvents is a whole event stream whose response objects name prevID.
func echoEvents(events []byte, prevID string) []byte {
	var s eventScanner
	return s.scan(events, prevID, nil)
}

// terminalResponse is the response object of the terminal event in events
// (client-bound SSE bytes), if there is one.
func terminalResponse(events []byte) []byte {
	var s eventScanner
	var r []byte
	s.scan(events, "", func(obj []byte, final bool) {
		if final {
			r = obj
		}
	})
	return r
}

// storingTap keeps the response of a Responses stream when its terminal
// event goes by, before the relay writes it, and makes each response
// object name the response it continues. It remembers the response the
// stream began, for a stream that ends without one (turn.Ended).
type storingTap struct {
	dialect.Tap
	prevID  string
	keep    func([]byte) // nil: nothing is stored
	done    bool
	started []byte // the response of the last lifecycle event, until the terminal one
	s       eventScanner
}

func (t *storingTap) Feed(ev []byte) []byte { return t.check(t.Tap.Feed(ev)) }

func (t *storingTap) Close(eof bool, msg string) ([]byte, bool) {
	out, ok := t.Tap.Close(eof, msg)
	return t.check(out), ok
}

func (t *storingTap) check(out []byte) []byte {
	if len(out) == 0 || t.done && t.prevID == "" {
		return out
	}
	return t.s.scan(out, t.prevID, t.visit)
}

func (t *storingTap) visit(r []byte, final bool) {
	if t.done || t.keep == nil {
		return
	}
	if final {
		t.done, t.started = true, nil
		t.keep(r)
		return
	}
	t.started = bytes.Clone(r)
}
