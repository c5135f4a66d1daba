package dialect

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// Fields names the members of a client request body the gateway reads
// before routing it. "model" and "stream" are read in every dialect.
type Fields struct {
	// Conversation is the member that holds the conversation ("messages"):
	// required, and a non-empty array (or, with ConversationString, a
	// non-empty string).
	Conversation       string
	ConversationString bool
	// MaxOutput are the members that bound the output, in tokens; the
	// largest counts. The first is what Endpoint.RequireMaxOutput asks for.
	MaxOutput []string
	// Choices is the member that asks for several answers ("n"); "" when
	// the protocol has none.
	Choices string
	// Keep are members whose raw values Prepare reads (Scanned.Kept).
	Keep []string
}

// maxKept bounds Fields.Keep.
const maxKept = 6

// Scanned is what Scan read from a request body. The body itself is never
// decoded into structs on the pass-through lane.
type Scanned struct {
	Model      []byte // unquoted model name; aliases the body unless it had escapes
	ModelStart int    // byte offsets of the model value (quotes included)
	ModelEnd   int
	HasModel   bool

	Stream bool
	// MaxOutput is the largest of the Fields.MaxOutput members; 0 if none.
	MaxOutput int64
	// HasMaxOutput: the first Fields.MaxOutput member is present.
	HasMaxOutput bool
	// Conversation is -1 when the member is absent, 0 when it is empty, 1
	// otherwise.
	Conversation int
	// Choices is how many answers the request asks for; 0 when absent.
	Choices int64
	// ConversationRaw is the conversation member's raw value; it aliases
	// the body.
	ConversationRaw []byte

	kept [maxKept]jsontext.Value
}

// Kept returns the raw value of Fields.Keep[i], nil when absent. It aliases
// the body.
func (s *Scanned) Kept(i int) []byte { return s.kept[i] }

// ScanError is a client error found while scanning; Param names the member.
type ScanError struct {
	Param string
	Msg   string
}

func (e *ScanError) Error() string { return e.Msg }

var decoderPool = sync.Pool{New: func() any { return new(decoderBuf) }}

type decoderBuf struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

// Scan validates body as one JSON object in a single pass, rejects
// duplicate top-level names (a body must not be routed and billed as one
// model while the upstream, whose parser may keep the last duplicate, runs
// another), and reads the members f names. Nested values are validated but
// not decoded. Errors it returns are *ScanError.
func Scan(body []byte, f *Fields) (Scanned, error) {
	s := Scanned{Conversation: -1}
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
		return s, &ScanError{Msg: "request body must be a JSON object"}
	}
	var seen names // top-level names seen, for the duplicate check
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return s, syntaxError(body, err)
		}
		key := unquote(name)
		if seen.add(key) {
			return s, &ScanError{Param: Clip(string(key)), Msg: fmt.Sprintf("duplicate top-level field %q in request body", Clip(string(key)))}
		}
		if !f.wants(key) {
			if err := d.SkipValue(); err != nil {
				return s, syntaxError(body, err)
			}
			continue
		}
		v, err := d.ReadValue()
		if err != nil {
			return s, syntaxError(body, err)
		}
		if err := s.take(f, key, v, int(d.InputOffset())); err != nil {
			return s, err
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

// wants reports whether the scan reads member key.
func (f *Fields) wants(key []byte) bool {
	switch string(key) {
	case "model", "stream", f.Conversation, f.Choices:
		return len(key) > 0
	}
	for _, n := range f.MaxOutput {
		if string(key) == n {
			return true
		}
	}
	for _, n := range f.Keep {
		if string(key) == n {
			return true
		}
	}
	return false
}

// take records one member; end is the offset just past its value.
func (s *Scanned) take(f *Fields, key []byte, v jsontext.Value, end int) error {
	switch string(key) {
	case "model":
		if v.Kind() != '"' {
			return &ScanError{Param: "model", Msg: "model: expected a string"}
		}
		s.HasModel = true
		s.ModelStart, s.ModelEnd = end-len(v), end
		s.Model = unquote(v)
		return nil
	case "stream":
		switch v.Kind() {
		case 't':
			s.Stream = true
		case 'f', 'n':
		default:
			return &ScanError{Param: "stream", Msg: "stream: expected a boolean"}
		}
		return nil
	case f.Conversation:
		s.ConversationRaw = v
		return s.conversation(f, v)
	case f.Choices:
		// Validated by the upstream; here only read, to reserve n answers.
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n > 1 {
			s.Choices = n
		}
		return nil
	}
	for i, n := range f.MaxOutput {
		if string(key) == n {
			return s.maxOutput(n, i == 0, v)
		}
	}
	for i, n := range f.Keep {
		if string(key) == n && i < maxKept {
			s.kept[i] = v
		}
	}
	return nil
}

func (s *Scanned) conversation(f *Fields, v jsontext.Value) error {
	switch {
	case v.Kind() == '[':
		s.Conversation = 0
		if rest := bytes.TrimLeft(v[1:], " \t\r\n"); len(rest) > 0 && rest[0] != ']' {
			s.Conversation = 1
		}
	case v.Kind() == '"' && f.ConversationString:
		s.Conversation = 0
		if len(v) > 2 {
			s.Conversation = 1
		}
	case f.ConversationString:
		return &ScanError{Param: f.Conversation, Msg: f.Conversation + ": expected a string or an array"}
	default:
		return &ScanError{Param: f.Conversation, Msg: f.Conversation + ": expected an array"}
	}
	return nil
}

// maxOutput reads a bound on the output, which must be a positive whole
// number of tokens (or null): -1, 0, 5.5 or 1e308 would otherwise reach
// the upstream on the pass-through lane, or make a limit's reservation
// that means nothing.
func (s *Scanned) maxOutput(name string, first bool, v jsontext.Value) error {
	switch v.Kind() {
	case '0':
		n, err := strconv.ParseInt(string(v), 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && v[0] != '-':
			n = math.MaxInt64 // past int64: still more than any limit
		case err != nil && bytes.ContainsAny(v, ".eE"):
			return &ScanError{Param: name, Msg: name + ": expected an integer, got " + Clip(string(v))}
		case err != nil || n < 1:
			return &ScanError{Param: name, Msg: name + ": must be a positive integer, got " + Clip(string(v))}
		}
		s.HasMaxOutput = s.HasMaxOutput || first
		s.MaxOutput = max(s.MaxOutput, n)
	case 'n':
	default:
		return &ScanError{Param: name, Msg: name + ": expected an integer"}
	}
	return nil
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
		if errors.Is(se.Err, io.ErrUnexpectedEOF) || se.Err == io.EOF {
			msg = "unexpected end of input" // not Go's "unexpected EOF"
		}
	} else if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
		offset = len(body)
		msg = "unexpected end of input"
	}
	if offset < 0 {
		return &ScanError{Msg: "malformed JSON in request body: " + msg}
	}
	offset = min(offset, len(body))
	line := 1 + bytes.Count(body[:offset], []byte("\n"))
	col := offset - bytes.LastIndexByte(body[:offset], '\n')
	return &ScanError{Msg: fmt.Sprintf("malformed JSON in request body at line %d, column %d (byte %d): %s", line, col, offset, msg)}
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

// unsafeString views b as a string without copying; the string and gjson
// results derived from it must not outlive b's current contents.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// MaxEcho bounds every client-supplied string the gateway stores, logs or
// echoes in an error (a model name, a path, a member name): a client must
// not turn one request into megabytes of log, ledger or answer.
const MaxEcho = 256

// Clip returns s cut to at most MaxEcho bytes on a character boundary,
// marked with "…" when cut.
func Clip(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	cut := MaxEcho - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
