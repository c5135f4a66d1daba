// Package embeddings converts OpenAI's POST /v1/embeddings request and
// answer, and the embedding APIs of Gemini, Vertex AI and Bedrock (Titan,
// Cohere), to and from their wire shapes. Every function is pure: no HTTP,
// no gateway state; the gateway calls them around its own upstream calls.
package embeddings

import (
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Request is a parsed OpenAI embeddings request body.
type Request struct {
	Model      string
	Inputs     []Input // in the client's order
	Format     string  // "float" (default when absent) or "base64"
	Dimensions int     // 0: the model's default
	User       string
	TaskType   string // extension member "task_type" (Gemini/Vertex task type, e.g. RETRIEVAL_QUERY), "" when absent
	InputType  string // extension member "input_type" (Cohere: search_document, search_query, classification, clustering), "" when absent
}

// Input is one input: text, or a token array (Tokens != nil).
type Input struct {
	Text   string
	Tokens []int64
}

// Error is a request the client must fix (the gateway answers 400
// invalid_request_error with Param and Message).
type Error struct{ Param, Message string }

func (e *Error) Error() string { return e.Message }

// MaxInputs is OpenAI's own limit on inputs per request.
const MaxInputs = 2048

const msgInputShape = "input: must be a string, an array of strings, an array of tokens or an array of token arrays"

var (
	errBody       = &Error{Message: "We could not parse the JSON body of your request: it must be a JSON object."}
	errInputShape = &Error{Param: "input", Message: msgInputShape}
	errInputEmpty = &Error{Param: "input", Message: "input: must not be empty"}
	errInputMany  = &Error{Param: "input", Message: "input: at most " + strconv.Itoa(MaxInputs) + " inputs in one request"}
	errEmptyText  = &Error{Param: "input", Message: "input: an array of strings must not hold an empty string"}
	errEmptyToks  = &Error{Param: "input", Message: "input: a token array must not be empty"}
	errToken      = &Error{Param: "input", Message: "input: tokens must be non-negative integers"}
	errFormat     = &Error{Param: "encoding_format", Message: `encoding_format: must be "float" or "base64"`}
	errDimensions = &Error{Param: "dimensions", Message: "dimensions: must be a positive integer"}
	errModel      = &Error{Param: "model", Message: "model: must be a non-empty string"}
	errUser       = &Error{Param: "user", Message: "user: must be a string"}
	errTaskType   = &Error{Param: "task_type", Message: "task_type: must be a string"}
	errInputType  = &Error{Param: "input_type", Message: "input_type: must be a string"}
)

// view reads b as a string without copying: gjson then hands back
// substrings of the body, and Parse copies what it keeps.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Parse reads an OpenAI embeddings request body. It accepts exactly
// OpenAI's input shapes and refuses everything else with an *Error naming
// the member at fault; unknown members are ignored. The Request shares no
// memory with body.
func Parse(body []byte) (*Request, error) {
	// gjson reads leniently: validate first, and refuse invalid UTF-8 as
	// OpenAI does, so that every accepted text re-encodes to itself.
	if !validJSON(body) || !utf8.Valid(body) {
		return nil, errBody
	}
	root := gjson.Parse(view(body))
	if !root.IsObject() {
		return nil, errBody
	}
	r := &Request{Format: "float"}
	var input gjson.Result
	var err error
	// One pass over the members; a repeated member counts as its last
	// occurrence, as with encoding/json.
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "model":
			r.Model, err = optString(v, errModel)
		case "input":
			input = v
		case "encoding_format":
			switch {
			case v.Type == gjson.Null:
			case v.Type == gjson.String && v.Str == "float":
				r.Format = "float" // the constant, not a copy of the body
			case v.Type == gjson.String && v.Str == "base64":
				r.Format = "base64"
			default:
				err = errFormat
			}
		case "dimensions":
			r.Dimensions, err = parseDimensions(v)
		case "user":
			r.User, err = optString(v, errUser)
		case "task_type":
			r.TaskType, err = optString(v, errTaskType)
		case "input_type":
			r.InputType, err = optString(v, errInputType)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if r.Model == "" {
		return nil, errModel
	}
	if r.Inputs, err = parseInput(input); err != nil {
		return nil, err
	}
	return r, nil
}

// optString reads a string member; null counts as absent.
func optString(v gjson.Result, bad *Error) (string, error) {
	switch v.Type {
	case gjson.Null:
		return "", nil
	case gjson.String:
		return strings.Clone(v.Str), nil
	}
	return "", bad
}

func parseDimensions(v gjson.Result) (int, error) {
	if v.Type == gjson.Null {
		return 0, nil
	}
	if v.Type != gjson.Number {
		return 0, errDimensions
	}
	// Only an integer literal: 1.5, 1e3 and 1024.0 are refused.
	n, err := strconv.ParseInt(v.Raw, 10, 32)
	if err != nil || n <= 0 {
		return 0, errDimensions
	}
	return int(n), nil
}

func parseInput(v gjson.Result) ([]Input, error) {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return nil, &Error{Param: "input", Message: "input: required"}
	case v.Type == gjson.String:
		if v.Str == "" {
			return nil, errInputEmpty
		}
		return []Input{{Text: strings.Clone(v.Str)}}, nil
	case !v.IsArray():
		return nil, errInputShape
	}
	// The first element decides the shape; every other must match it.
	var first gjson.Result
	v.ForEach(func(_, e gjson.Result) bool { first = e; return false })
	switch {
	case !first.Exists():
		return nil, errInputEmpty
	case first.Type == gjson.String:
		return parseTexts(v)
	case first.Type == gjson.Number:
		toks, err := appendTokens(nil, v)
		if err != nil {
			return nil, err
		}
		return []Input{{Tokens: toks}}, nil
	case first.IsArray():
		return parseTokenArrays(v)
	}
	return nil, errInputShape
}

// parseTexts copies all the texts into one buffer, then slices it: three
// allocations for any number of inputs (plus gjson's for escaped texts).
func parseTexts(v gjson.Result) ([]Input, error) {
	// The unescaped texts are never longer than the raw array.
	buf := make([]byte, 0, len(v.Raw))
	var small [256]int
	ends := small[:0]
	var err error
	v.ForEach(func(_, e gjson.Result) bool {
		switch {
		case e.Type != gjson.String:
			err = errInputShape
		case e.Str == "":
			err = errEmptyText
		case len(ends) == MaxInputs:
			err = errInputMany
		default:
			buf = append(buf, e.Str...)
			ends = append(ends, len(buf))
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is never written again
	out := make([]Input, len(ends))
	from := 0
	for i, to := range ends {
		out[i].Text = all[from:to]
		from = to
	}
	return out, nil
}

// parseTokenArrays reads an array of token arrays into one backing slice.
func parseTokenArrays(v gjson.Result) ([]Input, error) {
	var flat []int64
	var small [256]int
	ends := small[:0]
	var err error
	v.ForEach(func(_, e gjson.Result) bool {
		switch {
		case !e.IsArray():
			err = errInputShape
		case len(ends) == MaxInputs:
			err = errInputMany
		default:
			n := len(flat)
			if flat, err = appendTokens(flat, e); err == nil {
				if len(flat) == n {
					err = errEmptyToks
				}
				ends = append(ends, len(flat))
			}
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Input, len(ends))
	from := 0
	for i, to := range ends {
		out[i].Tokens = flat[from:to:to]
		from = to
	}
	return out, nil
}

// appendTokens appends the tokens of one token array.
func appendTokens(dst []int64, arr gjson.Result) ([]int64, error) {
	var err error
	arr.ForEach(func(_, e gjson.Result) bool {
		if e.Type != gjson.Number {
			if e.Type == gjson.String || e.IsArray() {
				err = errInputShape // a mixed array
			} else {
				err = errToken
			}
			return false
		}
		n, perr := strconv.ParseInt(e.Raw, 10, 64)
		if perr != nil || n < 0 {
			err = errToken
			return false
		}
		dst = append(dst, n)
		return true
	})
	return dst, err
}
