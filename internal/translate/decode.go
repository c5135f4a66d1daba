package translate

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// The bodies of the translation lanes (Chat, Messages, Responses and
// Gemini requests, and the non-streamed answers of Chat, Messages and
// Gemini upstreams) are decoded by hand, token by token, rather than
// by the reflective decoder: it is most of what a small translated request
// costs. The hand-written decoders take only what they are sure of: on
// anything else (a value of the wrong kind, a number out of range, bad
// syntax) they give up and the reflective decoder decodes the body again,
// so the result, and every error a client or an operator sees, is the
// reflective decoder's. FuzzDecode* hold the two to the same results.

// decode decodes body into v as jsonx.Unmarshal does.
func decode[T any](body []byte, v *T) error {
	var ok bool
	switch v := any(v).(type) {
	case *openai.ChatRequest:
		ok = decodeWith(body, v, (*reader).chatRequest)
	case *openai.Completion:
		ok = decodeWith(body, v, (*reader).completion)
	case *anthropic.MessagesRequest:
		ok = decodeWith(body, v, (*reader).messagesRequest)
	case *anthropic.Response:
		ok = decodeWith(body, v, (*reader).messagesResponse)
	case *responses.Request:
		ok = decodeWith(body, v, (*reader).responsesRequest)
	case *gemini.Request:
		ok = decodeWith(body, v, (*reader).geminiRequest)
	case *gemini.Response:
		ok = decodeWith(body, v, (*reader).geminiResponse)
	}
	if ok {
		return nil
	}
	*v = *new(T)
	return jsonx.Unmarshal(body, v)
}

// decodeWith decodes body, a JSON object and nothing after it, into v
// with the hand-written decoder f, and reports whether it could.
func decodeWith[T any](body []byte, v *T, f func(*reader, *T)) bool {
	r := readers.Get().(*reader)
	defer r.release()
	r.src = *bytes.NewBuffer(body)
	r.dec.Reset(&r.src)
	r.failed = false
	if r.kind() != '{' {
		return false
	}
	f(r, v)
	if r.failed {
		return false
	}
	_, err := r.dec.ReadToken()
	return err == io.EOF
}

var readers = sync.Pool{New: func() any { return new(reader) }}

// reader reads tokens of one body. The first unexpected token sets
// failed, and every read after it is a no-op that returns a zero value.
type reader struct {
	src     bytes.Buffer // aliases the body: the decoder does not copy it
	dec     jsontext.Decoder
	failed  bool
	scratch []byte      // an unescaped string
	strings [256]string // see intern
}

func (r *reader) release() {
	if cap(r.scratch) > 64<<10 {
		r.scratch = nil
	}
	r.src = bytes.Buffer{}
	r.dec.Reset(&r.src) // drops the reference to the body
	readers.Put(r)
}

func (r *reader) fail() { r.failed = true }

// check records err, which a read returned.
func (r *reader) check(err error) {
	if err != nil {
		r.failed = true
	}
}

// kind is the kind of the next token, 0 after a failure.
func (r *reader) kind() jsontext.Kind {
	if r.failed {
		return 0
	}
	k := r.dec.PeekKind()
	if k == 0 {
		r.failed = true
	}
	return k
}

// null consumes a null when one comes next, and reports whether it did.
func (r *reader) null() bool {
	if r.kind() != 'n' {
		return false
	}
	_, err := r.dec.ReadToken()
	r.check(err)
	return true
}

// str reads a string; null is "".
func (r *reader) str() string {
	switch r.kind() {
	case '"':
		v, err := r.dec.ReadValue()
		if err != nil {
			r.fail()
			return ""
		}
		b := v[1 : len(v)-1]
		if bytes.IndexByte(b, '\\') >= 0 {
			if r.scratch, err = jsontext.AppendUnquote(r.scratch[:0], v); err != nil {
				r.fail()
				return ""
			}
			b = r.scratch
		}
		return r.intern(b)
	case 'n':
		r.null()
	default:
		r.fail()
	}
	return ""
}

// intern is string(b), shared with the last string of the same hash that
// was read: roles, types, stop reasons and model names repeat from
// message to message and from body to body.
func (r *reader) intern(b []byte) string {
	if len(b) < 2 || len(b) > 32 {
		return string(b)
	}
	h := uint32(len(b))
	for _, c := range b[:min(len(b), 8)] {
		h = h*31 + uint32(c)
	}
	h = h*31 + uint32(b[len(b)-1])
	s := &r.strings[h%uint32(len(r.strings))]
	if *s != string(b) {
		*s = string(b)
	}
	return *s
}

// strPtr reads a string; null is nil.
func (r *reader) strPtr() *string {
	if r.null() || r.failed {
		return nil
	}
	s := r.str()
	return &s
}

// boolean reads a bool; null is false.
func (r *reader) boolean() bool {
	switch r.kind() {
	case 't', 'f':
		tok, err := r.dec.ReadToken()
		if err != nil {
			r.fail()
			return false
		}
		return tok.Bool()
	case 'n':
		r.null()
	default:
		r.fail()
	}
	return false
}

// boolPtr reads a bool; null is nil.
func (r *reader) boolPtr() *bool {
	if r.null() || r.failed {
		return nil
	}
	b := r.boolean()
	return &b
}

// number reads the raw text of a number.
func (r *reader) number() []byte {
	if r.kind() != '0' {
		r.fail()
		return nil
	}
	v, err := r.dec.ReadValue()
	r.check(err)
	return v
}

// int reads an integer (no fraction, no exponent) that fits in an int64;
// null is 0.
func (r *reader) int() int64 {
	if r.null() {
		return 0
	}
	v := r.number()
	if r.failed {
		return 0
	}
	for i, c := range v {
		if (c < '0' || c > '9') && (i > 0 || c != '-') {
			r.fail()
			return 0
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	r.check(err)
	return n
}

// intPtr reads an integer; null is nil.
func (r *reader) intPtr() *int64 {
	if r.null() || r.failed {
		return nil
	}
	n := r.int()
	return &n
}

// floatPtr reads a finite number; null is nil.
func (r *reader) floatPtr() *float64 {
	if r.null() || r.failed {
		return nil
	}
	v := r.number()
	if r.failed {
		return nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	r.check(err)
	return &f
}

// raw reads any value as it is, null included, into memory of its own.
func (r *reader) raw() jsontext.Value {
	if r.kind() == 0 {
		return nil
	}
	v, err := r.dec.ReadValue()
	r.check(err)
	return v.Clone()
}

// skip reads past a value of a member the type has no field for.
func (r *reader) skip() {
	if r.kind() != 0 {
		r.check(r.dec.SkipValue())
	}
}

// reflect decodes the next value into v with the reflective decoder:
// for members rare enough that a hand-written decoder would not pay.
func (r *reader) reflect(v any) {
	if r.kind() != 0 {
		r.check(json.UnmarshalDecode(&r.dec, v))
	}
}

// open reads the start of an object or array (want is '{' or '['), and
// reports whether there was one: null is none.
func (r *reader) open(want jsontext.Kind) bool {
	switch r.kind() {
	case want:
		_, err := r.dec.ReadToken()
		r.check(err)
		return !r.failed
	case 'n':
		r.null()
	default:
		r.fail()
	}
	return false
}

// more reports whether another member or element comes, reading the end
// of the object or array when none does.
func (r *reader) more() bool {
	switch r.kind() {
	case 0:
		return false
	case '}', ']':
		_, err := r.dec.ReadToken()
		r.check(err)
		return false
	}
	return true
}

// name reads a member's name: unquoted, and as it is spelt (quoted);
// both are valid only until the next read.
func (r *reader) name() (name, quoted []byte) {
	v, err := r.dec.ReadValue()
	if err != nil || v.Kind() != '"' {
		r.fail()
		return nil, nil
	}
	quoted = v
	name = quoted[1 : len(quoted)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		if name, err = jsontext.AppendUnquote(nil, quoted); err != nil {
			r.fail()
		}
	}
	return name, quoted
}

// extra appends a member the type has no field for to its embedded
// object of other members, as the reflective decoder does.
func (r *reader) extra(dst *jsontext.Value, quoted []byte) {
	b := *dst
	if len(b) == 0 {
		b = append(b, '{')
	} else {
		b = append(b[:len(b)-1], ',')
	}
	b = append(b, quoted...)
	b = append(b, ':')
	if r.kind() == 0 {
		return
	}
	v, err := r.dec.ReadValue()
	r.check(err)
	b = append(b, v...)
	*dst = append(b, '}')
}

// list reads an array into a slice, each element with elem; null is nil
// and [] is an empty slice.
func list[T any](r *reader, elem func(*reader, *T)) []T {
	if !r.open('[') {
		return nil
	}
	out := []T{}
	for r.more() {
		out = append(out, *new(T))
		elem(r, &out[len(out)-1]) // in place: a local would escape
	}
	return out
}

// pointer reads an object into a new T; null is nil.
func pointer[T any](r *reader, f func(*reader, *T)) *T {
	if r.null() || r.failed {
		return nil
	}
	v := new(T)
	f(r, v)
	return v
}

// str1 is str for list.
func str1(r *reader, s *string) { *s = r.str() }
