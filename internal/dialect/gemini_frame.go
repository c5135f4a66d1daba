package dialect

import (
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// arrayTap reframes a Gemini stream of server-sent events as the JSON
// array Google serves when a stream is asked for without alt=sse: each
// event's data becomes an element as it arrives, "[" before the first,
// "\n,\r\n" between, "]" at the end. The wrapped tap reads the events
// (and may drop or translate them) first.
type arrayTap struct {
	Tap
	f       sse.Fields
	started bool
	scratch []byte
}

var _ Framer = (*arrayTap)(nil)

func (t *arrayTap) ContentType() string { return "application/json; charset=UTF-8" }

func (t *arrayTap) Feed(ev []byte) []byte {
	out := t.Tap.Feed(ev)
	t.scratch = t.elements(t.scratch[:0], out)
	if len(t.scratch) == 0 {
		return nil
	}
	return t.scratch
}

// elements appends the data of each event in events as array elements.
func (t *arrayTap) elements(dst, events []byte) []byte {
	for len(events) > 0 {
		k := sse.Split(events)
		if k == 0 {
			k = len(events) // a tail without its blank line is still one event
		}
		t.f.Parse(events[:k])
		events = events[k:]
		if t.f.Data == nil {
			continue // comments and keep-alives have no element
		}
		if t.started {
			dst = append(dst, "\n,\r\n"...)
		} else {
			dst = append(dst, '[')
			t.started = true
		}
		dst = append(dst, t.f.Data...)
	}
	return dst
}

func (t *arrayTap) Close(eof bool, msg string) ([]byte, bool) {
	tail, clean := t.Tap.Close(eof, msg)
	out := t.elements(nil, tail)
	if !t.started {
		out = append(out, '[')
	}
	return append(out, ']'), clean
}

// Reframe turns the whole stream events (a translated answer to a stream
// request that the upstream answered at once) into the framing frame
// makes, with its content type.
func Reframe(frame func(Tap) Tap, events []byte) (out []byte, contentType string) {
	t := frame(nopTap{})
	out = append(out, t.Feed(events)...)
	tail, _ := t.Close(true, "")
	out = append(out, tail...)
	if f, ok := t.(Framer); ok {
		contentType = f.ContentType()
	}
	return out, contentType
}

// nopTap passes events as they are.
type nopTap struct{}

func (nopTap) Feed(ev []byte) []byte                 { return ev }
func (nopTap) StartError([]byte) (int, []byte, bool) { return 0, nil, false }
func (nopTap) Close(bool, string) ([]byte, bool)     { return nil, true }
func (nopTap) Usage() meter.Usage                    { return meter.Usage{} }
