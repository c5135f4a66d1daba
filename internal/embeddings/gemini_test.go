package embeddings

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func texts(s ...string) []Input {
	out := make([]Input, len(s))
	for i := range s {
		out[i].Text = s[i]
	}
	return out
}

// batchCase is a request body test for a batch of inputs.
type batchCase struct {
	name string
	r    Request
	in   []Input
	want string
}

// wantBody checks a request body is exactly want.
func wantBody(t *testing.T, got []byte, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("body =\n%s\nwant\n%s", got, want)
	}
}

// wantBatchRefusals checks what every batch builder refuses: token arrays
// (the client's fault), no inputs and more than max (the caller's).
func wantBatchRefusals(t *testing.T, build func([]Input) ([]byte, error), max int) {
	t.Helper()
	_, err := build([]Input{{Text: "a"}, {Tokens: []int64{1, 2}}})
	wantClientError(t, err, "input")
	_, err = build(nil)
	wantPlainError(t, err)
	_, err = build(repeatText("a", max+1))
	wantPlainError(t, err)
	if b, err := build(repeatText("a", max)); err != nil || !json.Valid(b) {
		t.Errorf("a full batch: %v", err)
	}
}

// wantClientError checks err is an *Error for param.
func wantClientError(t *testing.T, err error, param string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Param != param {
		t.Errorf("err = %v; want *Error for %q", err, param)
	}
}

// wantPlainError checks err is set and is not an *Error (the gateway's or
// the upstream's fault, not the client's).
func wantPlainError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if err == nil || errors.As(err, &e) {
		t.Errorf("err = %#v; want a plain error", err)
	}
}

func TestGeminiRequest(t *testing.T) {
	tests := []struct {
		name  string
		r     Request
		model string
		in    []Input
		want  string
	}{
		{"plain", Request{}, "gemini-embedding-001", texts("a"),
			`{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"a"}]}}]}`},
		{"task and dimensions", Request{TaskType: "RETRIEVAL_QUERY", Dimensions: 768}, "models/text-embedding-004", texts("a", `b"<>&`),
			`{"requests":[{"model":"models/text-embedding-004","content":{"parts":[{"text":"a"}]},"taskType":"RETRIEVAL_QUERY","outputDimensionality":768},` +
				`{"model":"models/text-embedding-004","content":{"parts":[{"text":"b\"<>&"}]},"taskType":"RETRIEVAL_QUERY","outputDimensionality":768}]}`},
		{"tuned model", Request{}, "tunedModels/x", texts("é\n"),
			`{"requests":[{"model":"tunedModels/x","content":{"parts":[{"text":"é\n"}]}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := GeminiRequest(&tt.r, tt.model, tt.in)
			wantBody(t, got, err, tt.want)
		})
	}
	wantBatchRefusals(t, func(in []Input) ([]byte, error) { return GeminiRequest(&Request{}, "m", in) }, GeminiMaxBatch)
	_, err := GeminiRequest(&Request{}, "", texts("a"))
	wantPlainError(t, err)
}

func TestGeminiAnswer(t *testing.T) {
	got, err := GeminiAnswer([]byte(`{"embeddings":[{"values":[0.25,-1,3e-2]},{"values":[1,2,3]}]}`), 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]float32{{0.25, -1, 0.03}, {1, 2, 3}}, got); d != "" {
		t.Errorf("GeminiAnswer (-want +got):\n%s", d)
	}
	for name, body := range map[string]string{
		"not JSON":           `{"embeddings":[`,
		"not an object":      `[{"values":[1]}]`,
		"error answer":       `{"error":{"code":400,"message":"bad"}}`,
		"too few":            `{"embeddings":[{"values":[1]}]}`,
		"too many":           `{"embeddings":[{"values":[1]},{"values":[1]},{"values":[1]}]}`,
		"no values":          `{"embeddings":[{"values":[1]},{}]}`,
		"values not array":   `{"embeddings":[{"values":[1]},{"values":1}]}`,
		"empty values":       `{"embeddings":[{"values":[]},{"values":[]}]}`,
		"string value":       `{"embeddings":[{"values":[1]},{"values":["1"]}]}`,
		"lengths differ":     `{"embeddings":[{"values":[1,2]},{"values":[1]}]}`,
		"embeddings object":  `{"embeddings":{"values":[1]}}`,
		"float32 overflow":   `{"embeddings":[{"values":[1]},{"values":[-4e38]}]}`,
		"trailing junk":      `{"embeddings":[{"values":[1]},{"values":[1]}]}]`,
		"embeddings as null": `{"embeddings":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			v, err := GeminiAnswer([]byte(body), 2)
			if v != nil {
				t.Errorf("vectors %v", v)
			}
			wantPlainError(t, err)
		})
	}
}

func TestGeminiRequestIsValidJSON(t *testing.T) {
	odd := []string{"\x00\x1f", "\u2028\u2029", strings.Repeat("😀", 3), `\"\\`}
	b, err := GeminiRequest(&Request{TaskType: "A\"B"}, "m", texts(odd...))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Requests []struct {
			Content  struct{ Parts []struct{ Text string } }
			TaskType string
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for i, s := range odd {
		if got := v.Requests[i].Content.Parts[0].Text; got != s || v.Requests[i].TaskType != "A\"B" {
			t.Errorf("text %d = %q, want %q", i, got, s)
		}
	}
}
