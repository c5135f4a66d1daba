package embeddings

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

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

// readVectors reads list, an array of exactly n items, taking each vector
// at path in its item ("" for the item itself). All vectors must be
// non-empty and of one length.
func readVectors(list gjson.Result, n int, path, who string) ([][]float32, error) {
	if !list.IsArray() {
		return nil, fmt.Errorf("embeddings: %s answer: no embeddings array", who)
	}
	items := list.Array()
	if len(items) != n {
		return nil, fmt.Errorf("embeddings: %s answer: %d embeddings for %d inputs", who, len(items), n)
	}
	out := make([][]float32, n)
	for i, it := range items {
		if path != "" {
			it = it.Get(path)
		}
		hint := 0
		if i > 0 {
			hint = len(out[0])
		}
		v, err := readFloats(it, hint)
		if err == nil {
			switch {
			case len(v) == 0:
				err = errors.New("empty embedding")
			case i > 0 && len(v) != len(out[0]):
				err = fmt.Errorf("%d values where embedding 0 has %d", len(v), len(out[0]))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("embeddings: %s answer: embedding %d: %w", who, i, err)
		}
		out[i] = v
	}
	return out, nil
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
