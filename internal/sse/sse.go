// Package sse frames Server-Sent Events without copying: it finds where an
// event ends in a buffer, reads an event's fields, and appends encoded events.
// It knows nothing of either LLM API.
//
// Line endings may be "\n", "\r\n" or a lone "\r" (the SSE specification
// allows all three); an event ends at the first empty line.
package sse

import "bytes"

// Split reports the length of the first complete event in b, including the
// blank line that ends it, or 0 when b holds no complete event yet.
func Split(b []byte) int {
	pos := 0
	for pos < len(b) {
		end, next := lineEnd(b, pos)
		if next < 0 {
			return 0 // the line (and so the event) is not complete yet
		}
		if end == pos { // empty line: dispatch
			return next
		}
		pos = next
	}
	return 0
}

// lineEnd finds the end of the line starting at pos: end is the index of its
// terminator and next the index after it. next is -1 when the line has no
// terminator yet, or ends in "\r" at the end of b (a "\n" may follow).
func lineEnd(b []byte, pos int) (end, next int) {
	rest := b[pos:]
	nl := bytes.IndexByte(rest, '\n')
	scan := rest
	if nl >= 0 {
		scan = rest[:nl]
	}
	if cr := bytes.IndexByte(scan, '\r'); cr >= 0 {
		switch {
		case cr+1 < len(rest) && rest[cr+1] == '\n':
			return pos + cr, pos + cr + 2
		case cr+1 < len(rest):
			return pos + cr, pos + cr + 1 // lone \r
		default:
			return -1, -1 // \r at the end: wait for the next byte
		}
	}
	if nl < 0 {
		return -1, -1
	}
	return pos + nl, pos + nl + 1
}

// Fields holds the fields of one event. Name and Data alias the event bytes
// or the Fields' own scratch buffer; they are valid until the next Parse.
// The zero value is ready to use; a Fields is not safe for concurrent use.
type Fields struct {
	Name    []byte // the "event" field; nil when absent
	Data    []byte // the "data" lines joined by "\n"; nil when there were none
	scratch []byte
}

// Parse reads the fields of one complete event, as returned by Split.
// Comment lines (":...") and the "id" and "retry" fields are ignored.
func (f *Fields) Parse(ev []byte) {
	f.Name, f.Data = nil, nil
	multi := false
	for pos := 0; pos < len(ev); {
		end, next := lineEnd(ev, pos)
		if next < 0 {
			end, next = len(ev), len(ev)
		}
		line := ev[pos:end]
		pos = next
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "event":
			f.Name = value
		case "data":
			switch {
			case f.Data == nil:
				f.Data = value
				if f.Data == nil {
					f.Data = ev[pos:pos] // present but empty
				}
			case !multi:
				multi = true
				f.scratch = append(append(append(f.scratch[:0], f.Data...), '\n'), value...)
				f.Data = f.scratch
			default:
				f.scratch = append(append(f.scratch, '\n'), value...)
				f.Data = f.scratch
			}
		}
	}
}

// AppendEvent appends one encoded event to dst. An empty name writes a
// data-only event (the OpenAI style). data must not contain newlines; JSON
// produced by a compact encoder never does.
func AppendEvent(dst []byte, name string, data []byte) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}
