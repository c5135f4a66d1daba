package jsonx

import (
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Explain turns an error from Unmarshal or UnmarshalStrict of a client's
// body into what the client is told: path is the JSON path of the value
// at fault (messages[1].role; "" for the body itself), msg says where,
// what is accepted and what came. Neither ever names a Go type or package:
// the JSON library's own messages do, and clients must not see them.
func Explain(err error) (path, msg string) { return ExplainAt("", err) }

// ExplainAt is Explain for a value decoded on its own that sits at base
// in the client's body (tool_choice, limits): paths start there.
func ExplainAt(base string, err error) (path, msg string) {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &syn):
		return explainSyntax(base, syn)
	case errors.As(err, &sem):
		return explainSemantic(base, sem)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return base, at(base, "invalid JSON: unexpected end of input")
	}
	return base, at(base, "invalid JSON")
}

// Mismatch is the error a custom unmarshaler returns for a value of the
// wrong kind: got is the kind it found, expected what it takes ("a string
// or an array of content blocks"). Explain adds the path and what came.
func Mismatch(got jsontext.Kind, expected string) error {
	return &json.SemanticError{JSONKind: got, Err: expectedError(expected)}
}

type expectedError string

func (e expectedError) Error() string { return "expected " + string(e) }

func explainSyntax(base string, e *jsontext.SyntacticError) (string, string) {
	if e.Err == jsontext.ErrDuplicateName {
		path := Path(base, e.JSONPointer.Parent())
		return path, at(path, "duplicate field "+strconv.Quote(clip(e.JSONPointer.LastToken())))
	}
	what := "invalid syntax"
	switch {
	case errors.Is(e.Err, io.ErrUnexpectedEOF) || errors.Is(e.Err, io.EOF):
		what = "unexpected end of input"
	case e.Err != nil && !leaks(e.Err.Error()):
		what = e.Err.Error()
	}
	path := Path(base, e.JSONPointer)
	if base != "" {
		// Offsets count from the start of the value, not of the body.
		return path, at(path, "invalid JSON: "+what)
	}
	return path, at(path, fmt.Sprintf("invalid JSON at byte %d: %s", e.ByteOffset, what))
}

func explainSemantic(base string, e *json.SemanticError) (string, string) {
	t := e.GoType
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if e.Err == json.ErrUnknownName {
		path := Path(base, e.JSONPointer.Parent())
		msg := "unknown field " + strconv.Quote(clip(e.JSONPointer.LastToken()))
		if names := fieldNames(t); len(names) > 0 {
			msg += "; expected one of " + strings.Join(names, ", ")
		}
		return path, at(path, msg)
	}
	path := Path(base, e.JSONPointer)
	got := gotText(e)
	var pe *time.ParseError
	var ee expectedError
	switch {
	case errors.As(e.Err, &ee):
		msg := ee.Error()
		if got != "" {
			msg += ", got " + got
		}
		return path, at(path, msg)
	case errors.As(e.Err, &pe):
		return path, at(path, "expected "+expected(t)+", got "+clip(strconv.Quote(pe.Value)))
	case isInt(t) && (errors.Is(e.Err, strconv.ErrRange) || isNumberOutOfRange(e, t)):
		lo, hi := intRange(t)
		return path, at(path, fmt.Sprintf("expected %s from %s to %s, got %s", expected(t), lo, hi, got))
	case e.Err == nil || errors.Is(e.Err, strconv.ErrSyntax) || leaks(e.Err.Error()):
		msg := "expected " + expected(t)
		if got != "" {
			msg += ", got " + got
		}
		return path, at(path, msg)
	}
	// A custom unmarshaler's own message (limits' budget_usd, say): it
	// speaks the API's terms already.
	return path, at(path, e.Err.Error())
}

// isNumberOutOfRange reports whether an integer member got an integral
// number too large for it (1e100, 99999999999999999999): the library calls
// that a syntax error.
func isNumberOutOfRange(e *json.SemanticError, t reflect.Type) bool {
	if !isInt(t) || e.JSONKind != '0' || len(e.JSONValue) == 0 {
		return false
	}
	f, err := strconv.ParseFloat(string(e.JSONValue), 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return true
	case err != nil || f != math.Trunc(f):
		return false
	}
	lo, hi := intRange(t)
	l, _ := strconv.ParseFloat(lo, 64)
	h, _ := strconv.ParseFloat(hi, 64)
	return f < l || f > h
}

func isInt(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// intRange is the range of an integer type, as text.
func intRange(t reflect.Type) (lo, hi string) {
	shift := 64 - t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "0", strconv.FormatUint(uint64(math.MaxUint64)>>shift, 10)
	}
	return strconv.FormatInt(int64(math.MinInt64)>>shift, 10), strconv.FormatInt(int64(math.MaxInt64)>>shift, 10)
}

// at puts a path before a message.
func at(path, msg string) string {
	if path == "" {
		return msg
	}
	return path + ": " + msg
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	valueType           = reflect.TypeFor[jsontext.Value]()
	unmarshalerType     = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
	unmarshalerFromType = reflect.TypeFor[json.UnmarshalerFrom]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// expected says in JSON terms what a value of type t must be.
func expected(t reflect.Type) string {
	switch {
	case t == nil:
		return "a valid value"
	case t == timeType:
		return "an RFC 3339 time such as 2026-01-02T15:04:05Z"
	case t == valueType:
		return "a JSON value"
	case reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerFromType):
		return "a valid value" // its own rules; it says more when it can
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		return "a string"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a valid value"
}

// gotText describes the value that came: itself when it is a short number
// or string, else its kind.
func gotText(e *json.SemanticError) string {
	if v := e.JSONValue; len(v) > 0 {
		return clip(string(v))
	}
	switch e.JSONKind {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{', '}':
		return "an object"
	case '[', ']':
		return "an array"
	}
	return ""
}

// clip bounds echoed client text.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// goQualified matches a Go package-qualified name (time.Time, limit.USD).
var goQualified = regexp.MustCompile(`\b[a-z][a-z0-9]*\.[A-Z]`)

// leaks reports whether a message names Go internals.
func leaks(msg string) bool {
	for _, s := range []string{"Go ", "json:", "jsontext", "nmarshal", "reflect", "strconv", "interface {"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return goQualified.MatchString(msg)
}

// fieldNames lists the JSON member names a struct type takes, in order;
// nil past a few dozen (too many to be of help).
func fieldNames(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag, hasTag := f.Tag.Lookup("json")
			name, opts, _ := strings.Cut(tag, ",")
			switch {
			case tag == "-" || strings.Contains(opts, "unknown") || strings.Contains(opts, "embed"):
				continue
			case strings.Contains(opts, "inline") || f.Anonymous && !hasTag:
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft)
				}
				continue
			case !f.IsExported():
				continue
			case name == "":
				name = f.Name
			}
			names = append(names, name)
		}
	}
	walk(t)
	if len(names) > 30 {
		return nil
	}
	return names
}

// Path writes a JSON pointer (/messages/1/role) below base as the path a
// client reads: messages[1].role. Names that are not plain words are
// quoted (model_limits["gpt-4.1"]); an all-digit token is an index.
func Path(base string, p jsontext.Pointer) string {
	var b strings.Builder
	b.WriteString(base)
	for tok := range p.Tokens() {
		switch {
		case isIndex(tok):
			b.WriteString("[" + tok + "]")
		case isWord(tok):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		default:
			b.WriteString("[" + strconv.Quote(clip(tok)) + "]")
		}
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
