package embeddings

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"hello"}`,
		`{"model":"m","input":["a","b"],"encoding_format":"base64","dimensions":256}`,
		`{"model":"m","input":[1,2,3]}`,
		`{"model":"m","input":[[1,2],[3]],"user":"u","task_type":"RETRIEVAL_QUERY","input_type":"search_query"}`,
		`{"model":"m","input":["\u00e9\ud800","\\"]}`,
		`{"model":"m","input":[[]]}`,
		`{"model":"m","input":["a",1]}`,
		`{"model":"m","input":"x","dimensions":1.0}`,
		`[]`, `null`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Parse(body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || r != nil {
				t.Fatalf("Parse = %v, %#v; want nil and *Error", r, err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("Parse accepted invalid JSON %q", body)
		}
		if r.Model == "" || len(r.Inputs) == 0 || len(r.Inputs) > MaxInputs || r.Dimensions < 0 ||
			(r.Format != "float" && r.Format != "base64") {
			t.Fatalf("Parse accepted %+v", r)
		}
		tokens := r.Inputs[0].Tokens != nil
		for _, in := range r.Inputs {
			if (in.Tokens != nil) != tokens || (tokens && len(in.Tokens) == 0) || (!tokens && in.Text == "") {
				t.Fatalf("Parse accepted a mixed or empty input: %+v", r.Inputs)
			}
			for _, tok := range in.Tokens {
				if tok < 0 {
					t.Fatalf("negative token %d", tok)
				}
			}
		}
		// Written back and read again, the request is the same.
		again, err := Parse(requestBody(r))
		if err != nil {
			t.Fatalf("re-encoded request refused: %v\n%s", err, requestBody(r))
		}
		if d := cmp.Diff(r, again); d != "" {
			t.Fatalf("re-encoded request differs (-first +again):\n%s", d)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(nil, [][]float32{{1, -2}, {0.5, 3}}, "m", "float", 3))
	f.Add(Encode(nil, [][]float32{{1, -2}, {0.5, 3}}, "m", "base64", 3))
	f.Add([]byte(`{"data":[{"index":1,"embedding":[2]},{"index":0,"embedding":"AACAPw=="}],"usage":{"prompt_tokens":1.0}}`))
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1e39]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		vecs, tokens, err := Decode(body)
		checkVectors(t, vecs, len(vecs), err)
		if err != nil || tokens < 0 || len(vecs) == 0 {
			if err == nil || tokens != 0 {
				t.Fatalf("Decode = %v, %d, %v", vecs, tokens, err)
			}
			return
		}
		// What Decode read, Encode writes back and Decode reads again.
		for _, format := range []string{"float", "base64"} {
			again, n, err := Decode(Encode(nil, vecs, "m", format, tokens))
			if err != nil || n != tokens {
				t.Fatalf("%s: Decode(Encode) = %d, %v", format, n, err)
			}
			if !sameBits(again, vecs, format == "float") {
				t.Fatalf("%s round trip differs", format)
			}
		}
	})
}

// checkVectors is what every answer reader promises: n non-empty vectors
// of one length, or a plain error and nothing.
func checkVectors(t *testing.T, vecs [][]float32, n int, err error) {
	t.Helper()
	if err != nil {
		var e *Error
		if vecs != nil || errors.As(err, &e) {
			t.Fatalf("failed with %v, %#v", vecs, err)
		}
		return
	}
	if len(vecs) != n {
		t.Fatalf("%d vectors for %d", len(vecs), n)
	}
	for _, v := range vecs {
		if len(v) == 0 || len(v) != len(vecs[0]) {
			t.Fatalf("vector lengths %d and %d", len(v), len(vecs[0]))
		}
	}
}

func FuzzGeminiAnswer(f *testing.F) {
	f.Add([]byte(`{"embeddings":[{"values":[0.25,-1]},{"values":[1,2]}]}`), 2)
	f.Add([]byte(`{"embeddings":[{"values":[1]}]}`), 1)
	f.Add([]byte(`{"embeddings":[{"values":[1]},{}]}`), 2)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		vecs, err := GeminiAnswer(body, n)
		checkVectors(t, vecs, n, err)
		// Read raw, the same answer is taken or refused alike (a number
		// out of float32's range aside, which only parsing sees), and
		// written in floats it reads back as the parsed values.
		raw, _, rerr := Gemini.Answer(body, n, true)
		if err == nil && rerr != nil {
			t.Fatalf("parsed, but refused raw: %v", rerr)
		}
		if err != nil || rerr != nil || n == 0 { // Decode refuses an answer of no vectors
			return
		}
		Compact(raw)
		got, _, derr := Decode(EncodeVectors(nil, raw, "m", "float", 0))
		if derr != nil || !sameBits(got, vecs, false) {
			t.Fatalf("raw vectors read back as %v (%v), parsed %v", got, derr, vecs)
		}
	})
}

func FuzzVertexAnswer(f *testing.F) {
	f.Add([]byte(`{"predictions":[{"embeddings":{"statistics":{"truncated":false,"token_count":6},"values":[0.1,-0.2]}}]}`), 1)
	f.Add([]byte(`{"predictions":[{"embeddings":{"statistics":{"token_count":6.0},"values":[1]}},{"embeddings":{"statistics":{"token_count":1},"values":[2]}}]}`), 2)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		vecs, tokens, err := VertexAnswer(body, n)
		checkVectors(t, vecs, n, err)
		if tokens < 0 || (err != nil && tokens != 0) {
			t.Fatalf("tokens %d, err %v", tokens, err)
		}
	})
}

func FuzzCohereAnswer(f *testing.F) {
	f.Add([]byte(`{"id":"x","embeddings":[[0.5,1],[-1,2]],"response_type":"embeddings_floats"}`), 2)
	f.Add([]byte(`{"id":"x","embeddings":{"float":[[0.5,1]]},"response_type":"embeddings_by_type"}`), 1)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		vecs, err := CohereAnswer(body, n)
		checkVectors(t, vecs, n, err)
	})
}

func FuzzTitanAnswer(f *testing.F) {
	f.Add([]byte(`{"embedding":[0.5,-0.25],"inputTextTokenCount":4}`))
	f.Add([]byte(`{"embedding":[],"inputTextTokenCount":4}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		v, tokens, err := TitanAnswer(body)
		var vecs [][]float32
		if v != nil {
			vecs = [][]float32{v}
		}
		checkVectors(t, vecs, 1, err)
		if tokens < 0 || (err != nil && tokens != 0) {
			t.Fatalf("tokens %d, err %v", tokens, err)
		}
	})
}
