package dialect

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// promptWalk is a prompt counter's walk over a request. A counter keeps
// it linear in the body whatever the body's shape by reading each object
// once, member by member (no Get over a value already read), and by
// following nesting only as deep as its protocol nests; gjson scans a
// nested value once for each value around it that is read. Each value
// read is a step, recorded as work done on the counter, and the walk
// stops at the first step after the counter's context ended.
type promptWalk struct {
	c    *tokens.Counter
	stop int // the index of the first value not read; -1 while going
}

// walkPrompt walks a request's top-level members, calling member on each
// until the walk stops, then counts the body's unread rest (at the
// counter's measured rate: it is not encoded) and the request's framing.
func walkPrompt(c *tokens.Counter, body []byte, member func(w *promptWalk, key string, v gjson.Result)) {
	// The counter reads what gjson finds before returning: no copy of the
	// body is needed. Indexes count from the first byte parsed.
	start := len(body) - len(strings.TrimLeft(unsafeString(body), " \t\r\n"))
	w := promptWalk{c: c, stop: -1}
	w.members(gjson.Parse(unsafeString(body[start:])), func(k string, v gjson.Result) {
		if w.step(v) {
			member(&w, k, v)
		}
	})
	if w.stop >= 0 {
		c.Add(unsafeString(body[min(start+w.stop, len(body)):]))
	}
	c.AddTokens(3)
}

// step records the reading of v and reports whether the walk goes on.
func (w *promptWalk) step(v gjson.Result) bool {
	if w.stop >= 0 {
		return false
	}
	if !w.c.Walked(len(v.Raw)) {
		w.stop = v.Index
		return false
	}
	return true
}

func (w *promptWalk) going() bool { return w.stop < 0 }

// members calls f on each member of v (each element if v is an array,
// with no key; v itself if it is neither) until the walk stops. Reading
// them is part of the step that read v.
func (w *promptWalk) members(v gjson.Result, f func(key string, v gjson.Result)) {
	v.ForEach(func(k, v gjson.Result) bool {
		f(k.Str, v)
		return w.going()
	})
}

// items calls f on each element of v (as members does), each read as a
// step of its own: the turns of a conversation, the blocks of a turn.
func (w *promptWalk) items(v gjson.Result, f func(v gjson.Result)) {
	v.ForEach(func(_, v gjson.Result) bool {
		if w.step(v) {
			f(v)
		}
		return w.going()
	})
}

// content counts content given as a string, or calls f on each of its
// parts (as items does).
func (w *promptWalk) content(v gjson.Result, f func(part gjson.Result)) {
	if v.Type == gjson.String {
		w.c.Add(v.Str)
		return
	}
	w.items(v, f)
}

// tool counts a tool definition: its name, its description, and the JSON
// of the schema under the given key.
func (w *promptWalk) tool(t gjson.Result, schema string) {
	w.members(t, func(k string, v gjson.Result) {
		switch k {
		case "name", "description":
			w.c.Add(v.Str)
		case schema:
			w.c.Add(v.Raw)
		}
	})
}
