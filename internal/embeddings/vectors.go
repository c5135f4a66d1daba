package embeddings

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Helpers shared by the answer readers: an upstream answer that is not
// exactly what its API documents is an error (a plain one: the gateway
// answers 502), never a partial result.

// answerRoot checks body is one JSON object and returns it.
func answerRoot(body []byte, who string) (gjson.Result, error) {
	if !validJSON(body) {
		return gjson.Result{}, fmt.Errorf("embeddings: %s answer: not JSON", who)
	}
	root := gjson.Parse(view(body))
	if !root.IsObject() {
		return gjson.Result{}, fmt.Errorf("embeddings: %s answer: not a JSON object", who)
	}
	return root, nil
}

// readFloats reads a JSON array of numbers as float32s, parsing each
// number at float32 precision (parsing as float64 and rounding again could
// land on a neighbour). hint is the expected length, 0 if unknown. The
// array was validated with its body, so it is scanned directly rather
// than element by element through gjson, which costs as much again.
func readFloats(arr gjson.Result, hint int) ([]float32, error) {
	if !arr.IsArray() {
		return nil, errors.New("embedding is not an array")
	}
	s := arr.Raw[1 : len(arr.Raw)-1]
	if hint <= 0 {
		hint = len(s) / 8
	}
	out := make([]float32, 0, hint)
	for {
		s = trimSpace(s)
		if s == "" {
			return out, nil
		}
		// In valid JSON a number runs to the next separator.
		end := strings.IndexAny(s, ", \t\r\n")
		if end < 0 {
			end = len(s)
		}
		tok := s[:end]
		if c := tok[0]; c != '-' && (c < '0' || c > '9') {
			return nil, fmt.Errorf("value %d is not a number", len(out))
		}
		f, err := strconv.ParseFloat(tok, 32)
		if err != nil {
			return nil, fmt.Errorf("value %d: %s out of float32 range", len(out), tok)
		}
		out = append(out, float32(f))
		s = trimSpace(s[end:])
		if s != "" { // the comma
			s = s[1:]
		}
	}
}

func trimSpace(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n') {
		s = s[1:]
	}
	return s
}

// Vector is one embedding: its values, or, when read raw, the JSON array
// of numbers the upstream wrote (Raw), which an answer in floats copies as
// it is rather than parsing and printing every value again.
type Vector struct {
	Values []float32
	Raw    string
	n      int  // Raw's values
	spaced bool // Raw has white space
}

// readVectorsAs reads list, an array of exactly n items, taking each
// vector at path in its item ("" for the item itself): their values
// parsed, or (raw) their arrays checked and kept as they are. All vectors
// must be non-empty and of one length.
func readVectorsAs(list gjson.Result, n int, path, who string, raw bool) ([]Vector, error) {
	if !list.IsArray() {
		return nil, fmt.Errorf("embeddings: %s answer: no embeddings array", who)
	}
	out := make([]Vector, 0, min(max(n, 0), 4096))
	var err error
	list.ForEach(func(_, it gjson.Result) bool {
		if len(out) == n {
			err = fmt.Errorf("embeddings: %s answer: more than %d embeddings for %d inputs", who, n, n)
			return false
		}
		if path != "" {
			it = it.Get(path)
		}
		var v Vector
		v, err = readVector(it, len(out), out, raw)
		if err != nil {
			err = fmt.Errorf("embeddings: %s answer: embedding %d: %w", who, len(out), err)
			return false
		}
		out = append(out, v)
		return true
	})
	if err == nil && len(out) != n {
		err = fmt.Errorf("embeddings: %s answer: %d embeddings for %d inputs", who, len(out), n)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readVector reads the i-th vector of an answer, whose earlier ones are
// before: non-empty, and as long as the first.
func readVector(arr gjson.Result, i int, before []Vector, raw bool) (Vector, error) {
	var v Vector
	var n int
	var err error
	if raw {
		n, v.spaced, err = countNumbers(arr)
		v.Raw = arr.Raw
	} else {
		hint := 0
		if i > 0 {
			hint = before[0].len()
		}
		v.Values, err = readFloats(arr, hint)
		n = len(v.Values)
	}
	switch {
	case err != nil:
		return Vector{}, err
	case n == 0:
		return Vector{}, errors.New("empty embedding")
	case i > 0 && n != before[0].len():
		return Vector{}, fmt.Errorf("%d values where embedding 0 has %d", n, before[0].len())
	}
	v.n = n
	return v, nil
}

// values are the vectors' values (read not raw).
func values(vs []Vector) [][]float32 {
	if vs == nil {
		return nil
	}
	out := make([][]float32, len(vs))
	for i := range vs {
		out[i] = vs[i].Values
	}
	return out
}

// len is the vector's number of values.
func (v Vector) len() int {
	if v.Raw != "" {
		return v.n
	}
	return len(v.Values)
}

// countNumbers checks that arr, from a body validated as JSON, is an
// array of numbers, and counts them, without parsing them: in valid JSON
// a value that begins with '-' or a digit is a number, and holds no comma,
// so the scan leaps from comma to comma. spaced: white space is in it.
func countNumbers(arr gjson.Result) (n int, spaced bool, err error) {
	if !arr.IsArray() {
		return 0, false, errors.New("embedding is not an array")
	}
	s := arr.Raw[1 : len(arr.Raw)-1]
	for {
		t := trimSpace(s)
		spaced = spaced || len(t) != len(s)
		if t == "" {
			return n, spaced, nil
		}
		if c := t[0]; c != '-' && (c < '0' || c > '9') {
			return 0, false, fmt.Errorf("value %d is not a number", n)
		}
		n++
		i := strings.IndexByte(t, ',')
		if i < 0 {
			// The last number, and perhaps white space after it.
			spaced = spaced || strings.IndexAny(t, " \t\r\n") >= 0
			return n, spaced, nil
		}
		if c := t[i-1]; c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			spaced = true
		}
		s = t[i+1:]
	}
}

// wholeNumber reads a non-negative integer; a float with no fraction
// (7.0, as some upstreams print counts) is accepted.
func wholeNumber(v gjson.Result) (int, bool) {
	if v.Type != gjson.Number {
		return 0, false
	}
	if n, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
		return int(n), n >= 0 && n <= math.MaxInt32
	}
	f := v.Float()
	if f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// count reads a token count member, which must be present.
func count(v gjson.Result) (int, error) {
	if !v.Exists() {
		return 0, errors.New("missing")
	}
	n, ok := wholeNumber(v)
	if !ok {
		return 0, fmt.Errorf("%s is not a token count", v.Raw)
	}
	return n, nil
}

// maxDepth is encoding/json's limit on nesting.
const maxDepth = 10000

// validJSON is gjson.ValidBytes behind a nesting limit: gjson validates
// recursively, and a body deep enough would exhaust the goroutine stack,
// which is a fatal error rather than a panic.
func validJSON(b []byte) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"': // skip the string: brackets in it do not count
			for i++; i < len(b); i++ {
				j := bytes.IndexAny(b[i:], `"\`)
				if j < 0 {
					return false
				}
				i += j
				if b[i] == '"' {
					break
				}
				i++ // the escaped byte
			}
		case '[', '{':
			if depth++; depth > maxDepth {
				return false
			}
		case ']', '}':
			depth--
		}
	}
	return gjson.ValidBytes(b)
}

// Compact copies the vectors read raw out of the answer they point into,
// without its white space, into one buffer of their own, so that the
// answer can be let go while the vectors are kept.
func Compact(vs []Vector) {
	n := 0
	for _, v := range vs {
		n += len(v.Raw)
	}
	if n == 0 {
		return
	}
	buf := make([]byte, 0, n)
	for i := range vs {
		if vs[i].Raw == "" {
			continue
		}
		start := len(buf)
		if vs[i].spaced {
			buf = appendCompact(buf, vs[i].Raw)
		} else {
			buf = append(buf, vs[i].Raw...)
		}
		vs[i].Raw, vs[i].spaced = unsafe.String(unsafe.SliceData(buf[start:]), len(buf)-start), false
	}
}
