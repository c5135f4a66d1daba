package embeddings

import (
	"strings"
	"testing"
)

// An answer read raw and written in floats says what the same answer read
// and parsed says, value for value, without the upstream's white space;
// each wire reads its own answers both ways alike.
func TestRawVectors(t *testing.T) {
	pretty := "{\n  \"embeddings\": [\n    {\n      \"values\": [\n        0.013168523,\n        -0.008711934,\n        -1e-05,\n        0\n      ]\n    },\n" +
		"    {\n      \"values\": [1, 2.5, -3.25, 4e2]\n    }\n  ]\n}\n"
	for _, c := range []struct {
		wire *Wire
		body string
		n    int
	}{
		{Gemini, pretty, 2},
		{Vertex, `{"predictions":[{"embeddings":{"values":[0.5, -0.25],"statistics":{"token_count":3,"truncated":false}}}]}`, 1},
		{Titan, `{"embedding":[0.1,0.2,0.3],"inputTextTokenCount":4}`, 1},
		{Cohere, `{"embeddings":{"float":[[1,2],[3,4],[5,6]]},"response_type":"embeddings_by_type"}`, 3},
		{Cohere, `{"embeddings":[[1,2]],"response_type":"embeddings_floats"}`, 1},
	} {
		parsed, tp, err := c.wire.Answer([]byte(c.body), c.n, false)
		if err != nil {
			t.Fatalf("%s: %v", c.wire.Name, err)
		}
		raw, tr, err := c.wire.Answer([]byte(c.body), c.n, true)
		if err != nil || tr != tp || len(raw) != c.n {
			t.Fatalf("%s raw: %d vectors, %d tokens, %v", c.wire.Name, len(raw), tr, err)
		}
		out := EncodeVectors(nil, raw, "m", "float", 7)
		if strings.ContainsAny(string(out), " \n\t") {
			t.Errorf("%s: white space kept: %s", c.wire.Name, out)
		}
		got, tokens, err := Decode(out)
		if err != nil || tokens != 7 || !sameBits(got, values(parsed), false) {
			t.Errorf("%s: raw answer %s reads %v (%v), parsed %v", c.wire.Name, out, got, err, values(parsed))
		}
	}
	// Raw still refuses what parsing refuses.
	for _, bad := range []string{
		`{"embeddings":[{"values":["0.1"]}]}`,
		`{"embeddings":[{"values":[true]}]}`,
		`{"embeddings":[{"values":[]}]}`,
		`{"embeddings":[{"values":[1,2]},{"values":[1]}]}`,
		`{"embeddings":[{"values":[1]},{"values":[1]},{"values":[1]}]}`,
		`{"embeddings":[{"values":[1, {"a":1}]}]}`,
	} {
		if _, _, err := Gemini.Answer([]byte(bad), 2, true); err == nil {
			if _, _, err2 := Gemini.Answer([]byte(bad), 1, true); err2 == nil {
				t.Errorf("raw read accepted %s", bad)
			}
		}
	}
}

// Compact keeps vectors read raw when the answer they were read from is
// overwritten, and leaves out its white space.
func TestCompact(t *testing.T) {
	body := []byte("{\"embeddings\": [{\"values\": [ 1,\n 2 ]}, {\"values\": [3, 4]}]}")
	vs, _, err := Gemini.Answer(body, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	Compact(vs)
	for i := range body {
		body[i] = 'x'
	}
	if vs[0].Raw != "[1,2]" || vs[1].Raw != "[3,4]" {
		t.Errorf("after Compact: %q %q", vs[0].Raw, vs[1].Raw)
	}
}
