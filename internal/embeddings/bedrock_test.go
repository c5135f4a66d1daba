package embeddings

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTitanRequest(t *testing.T) {
	tests := []struct {
		name string
		r    Request
		in   Input
		want string
	}{
		{"plain", Request{}, Input{Text: "hello"}, `{"inputText":"hello","normalize":true}`},
		{"dimensions", Request{Dimensions: 512}, Input{Text: "a\tb"}, `{"inputText":"a\tb","dimensions":512,"normalize":true}`},
		{"256", Request{Dimensions: 256}, Input{Text: "x"}, `{"inputText":"x","dimensions":256,"normalize":true}`},
		{"1024", Request{Dimensions: 1024}, Input{Text: "x"}, `{"inputText":"x","dimensions":1024,"normalize":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TitanRequest(&tt.r, tt.in)
			wantBody(t, got, err, tt.want)
		})
	}
	for _, d := range []int{1, 128, 768, 1536, 3072} {
		_, err := TitanRequest(&Request{Dimensions: d}, Input{Text: "x"})
		wantClientError(t, err, "dimensions")
	}
	_, err := TitanRequest(&Request{}, Input{Tokens: []int64{1}})
	wantClientError(t, err, "input")
	if _, err := TitanRequest(&Request{Dimensions: 300}, Input{Text: "x"}); err == nil || err.Error() != "dimensions: this model takes 256, 512 or 1024" {
		t.Errorf("message: %v", err)
	}
}

func TestTitanAnswer(t *testing.T) {
	v, n, err := TitanAnswer([]byte(`{"embedding":[0.5,-0.25],"inputTextTokenCount":4,"embeddingsByType":{"float":[0.5,-0.25]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]float32{0.5, -0.25}, v); d != "" || n != 4 {
		t.Errorf("TitanAnswer: tokens %d (-want +got):\n%s", n, d)
	}
	for name, body := range map[string]string{
		"not JSON":         `{"embedding":[1]`,
		"not an object":    `[1]`,
		"no embedding":     `{"inputTextTokenCount":4}`,
		"empty embedding":  `{"embedding":[],"inputTextTokenCount":4}`,
		"string value":     `{"embedding":["a"],"inputTextTokenCount":4}`,
		"no token count":   `{"embedding":[1]}`,
		"bad token count":  `{"embedding":[1],"inputTextTokenCount":"4"}`,
		"null token count": `{"embedding":[1],"inputTextTokenCount":null}`,
		"message":          `{"message":"Malformed input request"}`,
	} {
		t.Run(name, func(t *testing.T) {
			v, n, err := TitanAnswer([]byte(body))
			if v != nil || n != 0 {
				t.Errorf("got %v, %d", v, n)
			}
			wantPlainError(t, err)
		})
	}
}

func TestCohereRequest(t *testing.T) {
	tests := []batchCase{
		{"default input type", Request{}, texts("a", "b"),
			`{"texts":["a","b"],"input_type":"search_document","embedding_types":["float"]}`},
		{"query", Request{InputType: "search_query"}, texts(`"q"`),
			`{"texts":["\"q\""],"input_type":"search_query","embedding_types":["float"]}`},
		{"v4 dimensions", Request{InputType: "clustering", Dimensions: 1536}, texts("a"),
			`{"texts":["a"],"input_type":"clustering","embedding_types":["float"],"output_dimension":1536}`},
		{"classification", Request{InputType: "classification", Dimensions: 256}, texts("a"),
			`{"texts":["a"],"input_type":"classification","embedding_types":["float"],"output_dimension":256}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CohereRequest(&tt.r, tt.in)
			wantBody(t, got, err, tt.want)
		})
	}
	_, err := CohereRequest(&Request{InputType: "image"}, texts("a"))
	wantClientError(t, err, "input_type")
	_, err = CohereRequest(&Request{InputType: "SEARCH_QUERY"}, texts("a"))
	wantClientError(t, err, "input_type")
	_, err = CohereRequest(&Request{Dimensions: 768}, texts("a"))
	wantClientError(t, err, "dimensions")
	wantBatchRefusals(t, func(in []Input) ([]byte, error) { return CohereRequest(&Request{}, in) }, CohereMaxBatch)
}

func TestCohereAnswer(t *testing.T) {
	want := [][]float32{{0.5, 1}, {-1, 2}}
	for name, body := range map[string]string{
		"embeddings_floats":  `{"id":"x","embeddings":[[0.5,1],[-1,2]],"response_type":"embeddings_floats","texts":["a","b"]}`,
		"embeddings_by_type": `{"id":"x","embeddings":{"float":[[0.5,1],[-1,2]]},"response_type":"embeddings_by_type","texts":["a","b"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := CohereAnswer([]byte(body), 2)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("CohereAnswer (-want +got):\n%s", d)
			}
		})
	}
	for name, body := range map[string]string{
		"not JSON":         `{"embeddings":[[1]`,
		"no embeddings":    `{"id":"x"}`,
		"string":           `{"embeddings":"x"}`,
		"too few":          `{"embeddings":[[1]]}`,
		"too many":         `{"embeddings":[[1],[1],[1]]}`,
		"by type no float": `{"embeddings":{"int8":[[1],[1]]}}`,
		"flat array":       `{"embeddings":[1,2]}`,
		"empty vector":     `{"embeddings":[[],[]]}`,
		"string value":     `{"embeddings":[[1],["1"]]}`,
		"lengths differ":   `{"embeddings":{"float":[[1],[1,2]]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			v, err := CohereAnswer([]byte(body), 2)
			if v != nil {
				t.Errorf("got %v", v)
			}
			wantPlainError(t, err)
		})
	}
}
