package embeddings

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Encode appends the OpenAI answer for vectors, in their order:
//
//	{"object":"list","data":[{"object":"embedding","index":i,"embedding":[...] or "base64"}],"model":model,"usage":{"prompt_tokens":n,"total_tokens":n}}
//
// Floats are written in the shortest form that reads back as the same
// float32; format "base64" writes the little-endian float32 bytes in
// standard base64, which the OpenAI SDKs decode. A non-finite value, which
// no JSON upstream can send, is written as 0 in float form so that the
// answer stays JSON.
func Encode(dst []byte, vectors [][]float32, model, format string, promptTokens int) []byte {
	vs := make([]Vector, len(vectors))
	for i, v := range vectors {
		vs[i].Values = v
	}
	return EncodeVectors(dst, vs, model, format, promptTokens)
}

// EncodeVectors is Encode for Vectors: one read raw is written as the
// upstream wrote it, white space left out (format float only: base64
// needs the values).
func EncodeVectors(dst []byte, vectors []Vector, model, format string, promptTokens int) []byte {
	b64 := format == "base64"
	size := 128 + len(model)
	for _, v := range vectors {
		switch {
		case v.Raw != "":
			size += 64 + len(v.Raw)
		case b64:
			size += 64 + base64.StdEncoding.EncodedLen(4*len(v.Values))
		default:
			size += 64 + 12*len(v.Values) // most embedding values print in 10 to 12 bytes
		}
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, `{"object":"list","data":[`...)
	for i, v := range vectors {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"object":"embedding","index":`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, `,"embedding":`...)
		switch {
		case v.Raw != "" && v.spaced:
			dst = appendCompact(dst, v.Raw)
		case v.Raw != "":
			dst = append(dst, v.Raw...)
		case b64:
			dst = append(dst, '"')
			dst = appendBase64(dst, v.Values)
			dst = append(dst, '"')
		default:
			dst = appendFloats(dst, v.Values)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"model":`...)
	dst = jsonx.AppendQuote(dst, model)
	dst = append(dst, `,"usage":{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(promptTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(promptTokens), 10)
	return append(dst, "}}"...)
}

// appendCompact appends a JSON array of numbers without its white space.
func appendCompact(dst []byte, arr string) []byte {
	for i := 0; i < len(arr); {
		j := i
		for j < len(arr) && arr[j] != ' ' && arr[j] != '\n' && arr[j] != '\r' && arr[j] != '\t' {
			j++
		}
		dst = append(dst, arr[i:j]...)
		for j < len(arr) && (arr[j] == ' ' || arr[j] == '\n' || arr[j] == '\r' || arr[j] == '\t') {
			j++
		}
		i = j
	}
	return dst
}

func appendFloats(dst []byte, v []float32) []byte {
	dst = append(dst, '[')
	for i, f := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			f = 0
		}
		dst = strconv.AppendFloat(dst, float64(f), 'g', -1, 32)
	}
	return append(dst, ']')
}

// b64Chunk is the bytes of 192 float32s: a multiple of 3, so the base64 of
// consecutive chunks concatenates without padding between them.
const b64Chunk = 768

func appendBase64(dst []byte, v []float32) []byte {
	var buf [b64Chunk]byte
	for len(v) > 0 {
		n := min(len(v), b64Chunk/4)
		for i, f := range v[:n] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(f))
		}
		dst = base64.StdEncoding.AppendEncode(dst, buf[:4*n])
		v = v[n:]
	}
	return dst
}

// decodeBase64 reads the base64 of little-endian float32s.
func decodeBase64(s string) ([]float32, error) {
	if len(s)%4 != 0 {
		return nil, errors.New("base64 embedding: length not a multiple of 4")
	}
	out := make([]float32, 0, base64.StdEncoding.DecodedLen(len(s))/4)
	var src [b64Chunk / 3 * 4]byte
	var buf [b64Chunk]byte
	for len(s) > 0 {
		c := copy(src[:], s)
		s = s[c:]
		n, err := base64.StdEncoding.Decode(buf[:], src[:c])
		if err != nil {
			return nil, fmt.Errorf("base64 embedding: %w", err)
		}
		if n%4 != 0 || (n < b64Chunk && len(s) > 0) {
			return nil, errors.New("base64 embedding: not a whole number of float32s")
		}
		for i := 0; i < n; i += 4 {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(buf[i:])))
		}
	}
	return out, nil
}

// Decode reads an OpenAI embeddings answer, float or base64 form, into the
// vectors in index order and the prompt tokens (0 when the answer has no
// usage). Any answer it cannot read fully is an error, and so are vectors
// of different lengths.
func Decode(body []byte) (vectors [][]float32, promptTokens int, err error) {
	root, err := answerRoot(body, "openai")
	if err != nil {
		return nil, 0, err
	}
	data, usage := members(root, "data", "usage")
	if !data.IsArray() {
		return nil, 0, errors.New(`embeddings: openai answer: no "data" array`)
	}
	items := data.Array()
	if len(items) == 0 {
		return nil, 0, errors.New("embeddings: openai answer: no embeddings")
	}
	vectors = make([][]float32, len(items))
	dims := 0
	for _, it := range items {
		index, e := members(it, "index", "embedding")
		idx, ok := wholeNumber(index)
		if !ok || idx >= len(items) {
			return nil, 0, fmt.Errorf("embeddings: openai answer: index %q out of 0..%d", index.Raw, len(items)-1)
		}
		if vectors[idx] != nil {
			return nil, 0, fmt.Errorf("embeddings: openai answer: index %d twice", idx)
		}
		var v []float32
		if e.Type == gjson.String {
			v, err = decodeBase64(e.Str)
		} else {
			v, err = readFloats(e, 0)
		}
		if err == nil {
			switch {
			case len(v) == 0:
				err = errors.New("empty embedding")
			case dims != 0 && len(v) != dims:
				err = fmt.Errorf("%d values where others have %d", len(v), dims)
			}
		}
		if err != nil {
			return nil, 0, fmt.Errorf("embeddings: openai answer: index %d: %w", idx, err)
		}
		vectors[idx], dims = v, len(v)
	}
	if usage.Exists() && usage.Type != gjson.Null {
		if promptTokens, err = count(usage.Get("prompt_tokens")); err != nil {
			return nil, 0, fmt.Errorf("embeddings: openai answer: usage.prompt_tokens: %w", err)
		}
	}
	return vectors, promptTokens, nil
}

// members finds two members of obj in one pass, where a Get for each would
// skip over the other's value again (an embedding is the bulk of a body).
func members(obj gjson.Result, a, b string) (va, vb gjson.Result) {
	obj.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case a:
			va = v
		case b:
			vb = v
		}
		return true
	})
	return va, vb
}
