package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"
)

// scanned is what the gateway reads from a request body before routing it.
// The body itself is never decoded into structs on the pass-through lane.
type scanned struct {
	model      []byte // unquoted model name; aliases body unless it had escapes
	modelStart int    // byte offsets of the model value (quotes included)
	modelEnd   int
	hasModel   bool

	stream       bool
	maxTokens    bool  // max_tokens present (required on /v1/messages)
	maxOutput    int64 // max_tokens or max_completion_tokens, whichever is larger; 0 if neither
	messages     int   // -1 absent, 0 empty array, 1 non-empty array
	includeUsage bool  // stream_options.include_usage is true
	choices      int64 // n (OpenAI): how many answers; 0 when absent

	streamOptionsObject bool // stream_options is an object
}

// scanError is a client error found while scanning; param names the field.
type scanError struct {
	param string
	msg   string
}

func (e *scanError) Error() string { return e.msg }

var decoderPool = sync.Pool{New: func() any { return new(decoderBuf) }}

type decoderBuf struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

// scanBody validates body as one JSON object in a single pass, rejects
// duplicate top-level names (a body must not be routed and billed as one
// model while the upstream, whose parser may keep the last duplicate, runs
// another), and extracts the routing fields. Nested values are validated
// but not decoded.
func scanBody(body []byte) (scanned, error) {
	s := scanned{messages: -1}
	db := decoderPool.Get().(*decoderBuf)
	defer decoderPool.Put(db)
	// A bytes.Buffer lets the decoder parse body in place, without a copy.
	db.buf = *bytes.NewBuffer(body)
	db.dec.Reset(&db.buf, jsontext.AllowDuplicateNames(true))
	d := &db.dec
	defer func() { // drop the references to body before pooling
		db.buf = bytes.Buffer{}
		db.dec.Reset(&db.buf)
	}()

	tok, err := d.ReadToken()
	if err != nil {
		return s, syntaxError(body, err)
	}
	if tok.Kind() != '{' {
		return s, &scanError{msg: "request body must be a JSON object"}
	}
	var seen names // top-level names seen, for the duplicate check
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return s, syntaxError(body, err)
		}
		key := unquote(name)
		if seen.add(key) {
			return s, &scanError{param: clip(string(key)), msg: fmt.Sprintf("duplicate top-level field %q in request body", clip(string(key)))}
		}
		switch string(key) {
		case "model", "stream", "max_tokens", "max_completion_tokens", "messages", "stream_options", "n":
			v, err := d.ReadValue()
			if err != nil {
				return s, syntaxError(body, err)
			}
			if err := s.take(string(key), v, int(d.InputOffset())); err != nil {
				return s, err
			}
		default:
			if err := d.SkipValue(); err != nil {
				return s, syntaxError(body, err)
			}
		}
	}
	if _, err := d.ReadToken(); err != nil { // the closing '}'
		return s, syntaxError(body, err)
	}
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the top-level object")
		}
		return s, syntaxError(body, err)
	}
	return s, nil
}

// take records one routing field; end is the offset just past its value.
func (s *scanned) take(key string, v jsontext.Value, end int) error {
	switch key {
	case "model":
		if v.Kind() != '"' {
			return &scanError{param: "model", msg: "model: expected a string"}
		}
		s.hasModel = true
		s.modelStart, s.modelEnd = end-len(v), end
		s.model = unquote(v)
	case "stream":
		switch v.Kind() {
		case 't':
			s.stream = true
		case 'f', 'n':
		default:
			return &scanError{param: "stream", msg: "stream: expected a boolean"}
		}
	case "max_tokens", "max_completion_tokens":
		switch v.Kind() {
		case '0':
			s.maxTokens = s.maxTokens || key == "max_tokens"
			n, err := strconv.ParseInt(string(v), 10, 64)
			if errors.Is(err, strconv.ErrRange) && v[0] != '-' {
				n = math.MaxInt64 // past int64: still more than any limit
			}
			s.maxOutput = max(s.maxOutput, n)
		case 'n':
		default:
			return &scanError{param: key, msg: key + ": expected an integer"}
		}
	case "messages":
		if v.Kind() != '[' {
			return &scanError{param: "messages", msg: "messages: expected an array"}
		}
		s.messages = 0
		if rest := bytes.TrimLeft(v[1:], " \t\r\n"); len(rest) > 0 && rest[0] != ']' {
			s.messages = 1
		}
	case "stream_options":
		s.streamOptionsObject = v.Kind() == '{'
		s.includeUsage = includeUsage(v)
	case "n":
		// Validated by the upstream; here only read, to reserve n answers.
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n > 1 {
			s.choices = n
		}
	}
	return nil
}

// includeUsage reports whether a stream_options object asks for usage. The
// value was validated by the scan, so gjson can read it directly.
func includeUsage(v jsontext.Value) bool {
	return v.Kind() == '{' && gjson.GetBytes(v, "include_usage").Type == gjson.True
}

// unquote returns the contents of a JSON string value. It aliases v unless
// the string has escapes.
func unquote(v jsontext.Value) []byte {
	if len(v) < 2 {
		return nil
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	out, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return v[1 : len(v)-1]
	}
	return out
}

// syntaxError turns a decoder error into a client error that says where.
func syntaxError(body []byte, err error) error {
	var se *jsontext.SyntacticError
	offset := -1
	msg := err.Error()
	if errors.As(err, &se) {
		offset = int(se.ByteOffset)
		msg = se.Err.Error()
	} else if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
		offset = len(body)
		msg = "unexpected end of input"
	}
	if offset < 0 {
		return &scanError{msg: "malformed JSON in request body: " + msg}
	}
	offset = min(offset, len(body))
	line := 1 + bytes.Count(body[:offset], []byte("\n"))
	col := offset - bytes.LastIndexByte(body[:offset], '\n')
	return &scanError{msg: fmt.Sprintf("malformed JSON in request body at line %d, column %d (byte %d): %s", line, col, offset, msg)}
}

// names is a set of top-level field names. Requests have a dozen or two,
// compared in a small array; past that a map keeps the check linear, so
// a body of a million names costs no more than reading it. Names alias
// the body, which outlives the set.
type names struct {
	few  [16][]byte
	n    int
	many map[string]struct{}
}

// add adds name and reports whether it was there already.
func (ns *names) add(name []byte) bool {
	if ns.many == nil {
		for _, prev := range ns.few[:ns.n] {
			if bytes.Equal(prev, name) {
				return true
			}
		}
		if ns.n < len(ns.few) {
			ns.few[ns.n] = name
			ns.n++
			return false
		}
		ns.many = make(map[string]struct{}, 2*len(ns.few))
		for _, prev := range ns.few {
			ns.many[unsafeString(prev)] = struct{}{}
		}
	}
	if _, ok := ns.many[unsafeString(name)]; ok {
		return true
	}
	ns.many[unsafeString(name)] = struct{}{}
	return false
}
