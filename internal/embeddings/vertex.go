package embeddings

import (
	"fmt"
	"strconv"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Vertex AI text-embedding models (text-embedding-005,
// text-multilingual-embedding-002, gemini-embedding-001): POST
// .../publishers/google/models/{model}:predict.

// VertexMaxBatch is the documented limit on input texts per predict call
// (the API also caps a call at 20,000 input tokens, and
// gemini-embedding-001 takes one instance per call: the caller splits
// accordingly).
const VertexMaxBatch = 250

// VertexRequest writes the predict body for inputs (at most
// VertexMaxBatch, all text):
//
//	{"instances":[{"content":...,"task_type":...}, ...],"parameters":{"outputDimensionality":N}}
//
// task_type and parameters are left out when r has none.
func VertexRequest(r *Request, inputs []Input) ([]byte, error) {
	if err := checkBatch(inputs, VertexMaxBatch, "vertex"); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64+textSize(inputs)+len(inputs)*(32+len(r.TaskType)))
	b = append(b, `{"instances":[`...)
	for i, in := range inputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"content":`...)
		b = jsonx.AppendQuote(b, in.Text)
		if r.TaskType != "" {
			b = append(b, `,"task_type":`...)
			b = jsonx.AppendQuote(b, r.TaskType)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if r.Dimensions > 0 {
		b = append(b, `,"parameters":{"outputDimensionality":`...)
		b = strconv.AppendInt(b, int64(r.Dimensions), 10)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// VertexAnswer reads a predict answer,
// {"predictions":[{"embeddings":{"values":[...],"statistics":{"token_count":N,"truncated":false}}}, ...]},
// which must hold exactly n vectors; tokens is the sum of their token counts.
func VertexAnswer(body []byte, n int) (vectors [][]float32, tokens int, err error) {
	vs, tokens, err := vertexVectors(body, n, false)
	return values(vs), tokens, err
}

func vertexVectors(body []byte, n int, raw bool) (vectors []Vector, tokens int, err error) {
	root, err := answerRoot(body, "vertex")
	if err != nil {
		return nil, 0, err
	}
	preds := root.Get("predictions")
	if vectors, err = readVectorsAs(preds, n, "embeddings.values", "vertex", raw); err != nil {
		return nil, 0, err
	}
	for i, p := range preds.Array() {
		c, err := count(p.Get("embeddings.statistics.token_count"))
		if err != nil {
			return nil, 0, fmt.Errorf("embeddings: vertex answer: embedding %d: statistics.token_count: %w", i, err)
		}
		tokens += c
	}
	return vectors, tokens, nil
}
