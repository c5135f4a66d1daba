package embeddings

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVertexRequest(t *testing.T) {
	tests := []batchCase{
		{"plain", Request{}, texts("a", "b"),
			`{"instances":[{"content":"a"},{"content":"b"}]}`},
		{"task and dimensions", Request{TaskType: "RETRIEVAL_DOCUMENT", Dimensions: 256}, texts("a", "b\n"),
			`{"instances":[{"content":"a","task_type":"RETRIEVAL_DOCUMENT"},{"content":"b\n","task_type":"RETRIEVAL_DOCUMENT"}],"parameters":{"outputDimensionality":256}}`},
		{"dimensions only", Request{Dimensions: 3072}, texts("a"),
			`{"instances":[{"content":"a"}],"parameters":{"outputDimensionality":3072}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VertexRequest(&tt.r, tt.in)
			wantBody(t, got, err, tt.want)
		})
	}
	wantBatchRefusals(t, func(in []Input) ([]byte, error) { return VertexRequest(&Request{}, in) }, VertexMaxBatch)
}

func TestVertexAnswer(t *testing.T) {
	body := `{"predictions":[` +
		`{"embeddings":{"statistics":{"truncated":false,"token_count":6},"values":[0.1,-0.2]}},` +
		`{"embeddings":{"statistics":{"truncated":true,"token_count":2048.0},"values":[1,2]}}],` +
		`"metadata":{"billableCharacterCount":12}}`
	got, tokens, err := VertexAnswer([]byte(body), 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]float32{{0.1, -0.2}, {1, 2}}, got); d != "" || tokens != 2054 {
		t.Errorf("VertexAnswer: tokens %d (-want +got):\n%s", tokens, d)
	}
	ok := `{"embeddings":{"statistics":{"token_count":1},"values":[1]}}`
	for name, body := range map[string]string{
		"not JSON":          `{"predictions":`,
		"no predictions":    `{"deployedModelId":"x"}`,
		"too few":           `{"predictions":[` + ok + `]}`,
		"too many":          `{"predictions":[` + ok + `,` + ok + `,` + ok + `]}`,
		"no values":         `{"predictions":[` + ok + `,{"embeddings":{"statistics":{"token_count":1}}}]}`,
		"no statistics":     `{"predictions":[` + ok + `,{"embeddings":{"values":[1]}}]}`,
		"string count":      `{"predictions":[` + ok + `,{"embeddings":{"statistics":{"token_count":"1"},"values":[1]}}]}`,
		"negative count":    `{"predictions":[` + ok + `,{"embeddings":{"statistics":{"token_count":-1},"values":[1]}}]}`,
		"fractional count":  `{"predictions":[` + ok + `,{"embeddings":{"statistics":{"token_count":1.5},"values":[1]}}]}`,
		"non-numeric value": `{"predictions":[` + ok + `,{"embeddings":{"statistics":{"token_count":1},"values":[true]}}]}`,
		"lengths differ":    `{"predictions":[` + ok + `,{"embeddings":{"statistics":{"token_count":1},"values":[1,2]}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			v, n, err := VertexAnswer([]byte(body), 2)
			if v != nil || n != 0 {
				t.Errorf("got %v, %d", v, n)
			}
			wantPlainError(t, err)
		})
	}
}
