package promptcache

import (
	"bytes"
	"slices"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"
)

// PlaceRaw marks breakpoints in the bytes of a Messages request on the
// pass-through lane, when the client marked none: every other byte is
// kept. It returns the new body (nil when it added nothing) and how many
// marks it added. The body must be a valid JSON object (the gateway's
// scan checked it).
func PlaceRaw(body []byte, o Options) ([]byte, int, error) {
	if countMarks(body) > 0 {
		return nil, 0, nil // the client chose its own breakpoints
	}
	r, err := readLayout(body)
	if err != nil {
		return nil, 0, err
	}
	o.OnlyIfNone = true
	picks, ttl, n := choose(&r.layout, o)
	if n == 0 {
		return nil, 0, nil
	}
	mark := ttl.mark()
	var edits []edit
	if picks[spotTools] {
		edits = append(edits, markObject(body, r.lastTool, mark))
	}
	if picks[spotSystem] {
		edits = append(edits, markPart(body, r.system, mark))
	}
	for j, s := range [2]spot{spotPrevUser, spotLastUser} {
		if picks[s] {
			edits = append(edits, markPart(body, r.users[j], mark))
		}
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	out := make([]byte, 0, len(body)+n*48)
	at := 0
	for _, e := range edits {
		out = append(append(out, body[at:e.start]...), e.with...)
		at = e.end
	}
	return append(out, body[at:]...), n, nil
}

// span is a value's place in the body: [start, end).
type span struct{ start, end int }

// part is where a mark goes: a string to turn into a marked text block,
// or the object of the block to mark.
type part struct {
	span
	str bool
}

// rawLayout is the layout of a body, and where each spot is in its bytes.
type rawLayout struct {
	layout
	lastTool span
	system   part
	users    [2]part // the previous and the latest user turn's last markable block
}

// readLayout reads the body's tools, system and messages in one pass.
func readLayout(body []byte) (*rawLayout, error) {
	r := &rawLayout{layout: newLayout()}
	// A bytes.Buffer lets the decoder parse the body in place, without
	// copying it into a buffer of its own.
	d := jsontext.NewDecoder(bytes.NewBuffer(body))
	if _, err := d.ReadToken(); err != nil {
		return nil, err
	}
	var tools, system int64 // sizes, in bytes
	type turn struct {
		content span
		end     int // of the message, from the start of messages
	}
	var turns [2]turn // the latest two user turns with a markable block
	found := 0
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return nil, err
		}
		switch name.String() {
		case "tools":
			els, size, err := elements(d)
			if err != nil {
				return nil, err
			}
			if len(els) > 0 {
				r.lastTool, tools = els[len(els)-1], int64(size)
			}
		case "system":
			v, err := d.ReadValue()
			if err != nil {
				return nil, err
			}
			end := int(d.InputOffset())
			system = int64(len(v))
			if p, ok := lastPart(v, end-len(v)); ok {
				r.system = p
				r.prefix[spotSystem] = 0 // set below, once the tools' size is known
			}
		case "messages":
			if _, err := d.ReadToken(); err != nil { // [
				return nil, err
			}
			start := int(d.InputOffset())
			for d.PeekKind() != ']' {
				m, err := d.ReadValue()
				if err != nil {
					return nil, err
				}
				end := int(d.InputOffset())
				ms := unsafeString(m) // gjson.GetBytes would copy what it finds
				if gjson.Get(ms, "role").Str != "user" {
					continue
				}
				c := gjson.Get(ms, "content")
				if c.Index <= 0 {
					continue
				}
				at := end - len(m) + c.Index
				if _, ok := lastPart(body[at:at+len(c.Raw)], 0); !ok {
					continue
				}
				turns[0], turns[1] = turns[1], turn{content: span{at, at + len(c.Raw)}, end: end - start}
				found++
			}
			if _, err := d.ReadToken(); err != nil { // ]
				return nil, err
			}
		default:
			if err := d.SkipValue(); err != nil {
				return nil, err
			}
		}
	}
	if r.lastTool.end > 0 {
		r.prefix[spotTools] = estimate(int(tools))
	}
	if r.prefix[spotSystem] == 0 {
		r.prefix[spotSystem] = estimate(int(tools + system))
	}
	for j, s := range [2]spot{spotPrevUser, spotLastUser} {
		if found < 2-j {
			continue
		}
		t := turns[j]
		p, _ := lastPart(body[t.content.start:t.content.end], t.content.start)
		r.users[j] = p
		r.prefix[s] = estimate(int(tools+system) + t.end)
	}
	return r, nil
}

// elements reads an array value and returns the span of each element and
// the array's size in bytes.
func elements(d *jsontext.Decoder) ([]span, int, error) {
	if d.PeekKind() != '[' {
		v, err := d.ReadValue()
		return nil, len(v), err
	}
	start := int(d.InputOffset())
	if _, err := d.ReadToken(); err != nil {
		return nil, 0, err
	}
	var out []span
	for d.PeekKind() != ']' {
		v, err := d.ReadValue()
		if err != nil {
			return nil, 0, err
		}
		end := int(d.InputOffset())
		if len(v) > 0 && v[0] == '{' {
			out = append(out, span{end - len(v), end})
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, 0, err
	}
	return out, int(d.InputOffset()) - start, nil
}

// lastPart finds where a mark goes in a content value (a string or an
// array of blocks) found at offset at: the string itself, or the last
// block that can carry one.
func lastPart(v []byte, at int) (part, bool) {
	switch {
	case len(v) > 2 && v[0] == '"':
		return part{span: span{at, at + len(v)}, str: true}, true
	case len(v) > 0 && v[0] == '[':
		var last part
		ok := false
		gjson.Parse(unsafeString(v)).ForEach(func(_, b gjson.Result) bool {
			if b.IsObject() && b.Index > 0 {
				typ := b.Get("type").Str
				if markable(typ, typ == "text" && b.Get("text").Str == "") {
					last, ok = part{span: span{at + b.Index, at + b.Index + len(b.Raw)}}, true
				}
			}
			return true
		})
		return last, ok
	}
	return part{}, false
}

// edit replaces body[start:end] with with.
type edit struct {
	span
	with []byte
}

// markObject adds a cache_control member at the end of the object at s.
func markObject(body []byte, s span, mark []byte) edit {
	close := s.end - 1 // the object's '}'
	with := []byte(`,"cache_control":`)
	if inner := bytes.TrimSpace(body[s.start+1 : close]); len(inner) == 0 {
		with = with[1:]
	}
	return edit{span: span{close, close}, with: append(with, mark...)}
}

// markPart marks a block, or turns a string into a marked text block.
func markPart(body []byte, p part, mark []byte) edit {
	if !p.str {
		return markObject(body, p.span, mark)
	}
	with := append([]byte(`[{"type":"text","text":`), body[p.start:p.end]...)
	with = append(append(append(with, `,"cache_control":`...), mark...), "}]"...)
	return edit{span: p.span, with: with}
}

// countMarks counts cache_control members anywhere in a body: the key
// followed by a colon (a string that only says "cache_control" is not
// one). A tool input with such a member counts too, which only errs
// toward adding nothing.
func countMarks(body []byte) int {
	key := []byte(`"cache_control"`)
	n := 0
	for i := 0; ; {
		j := bytes.Index(body[i:], key)
		if j < 0 {
			return n
		}
		i += j + len(key)
		rest := bytes.TrimLeft(body[i:], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			n++
		}
	}
}

// unsafeString views b as a string without copying; what gjson derives
// from it must not outlive b.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
