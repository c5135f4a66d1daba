package embeddings

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Gemini API (generativelanguage.googleapis.com): POST
// models/{model}:batchEmbedContents, the call the genai SDKs make for
// EmbedContent. Its answer has no token counts.

// GeminiMaxBatch is the most requests one batchEmbedContents call takes
// (the API refuses more: "at most 100 requests can be in one batch").
const GeminiMaxBatch = 100

// GeminiRequest writes the batchEmbedContents body for inputs (at most
// GeminiMaxBatch, all text), one request per input:
//
//	{"requests":[{"model":"models/{model}","content":{"parts":[{"text":...}]},"taskType":...,"outputDimensionality":N}, ...]}
//
// taskType and outputDimensionality are left out when r has none.
func GeminiRequest(r *Request, model string, inputs []Input) ([]byte, error) {
	if err := checkBatch(inputs, GeminiMaxBatch, "gemini"); err != nil {
		return nil, err
	}
	if model == "" {
		return nil, errors.New("embeddings: gemini: no model")
	}
	// The SDKs' resource name: "models/" unless the caller gave a full one.
	if !strings.HasPrefix(model, "models/") && !strings.HasPrefix(model, "tunedModels/") {
		model = "models/" + model
	}
	b := make([]byte, 0, 16+textSize(inputs)+len(inputs)*(80+len(model)+len(r.TaskType)))
	b = append(b, `{"requests":[`...)
	for i, in := range inputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"model":`...)
		b = jsonx.AppendQuote(b, model)
		b = append(b, `,"content":{"parts":[{"text":`...)
		b = jsonx.AppendQuote(b, in.Text)
		b = append(b, `}]}`...)
		if r.TaskType != "" {
			b = append(b, `,"taskType":`...)
			b = jsonx.AppendQuote(b, r.TaskType)
		}
		if r.Dimensions > 0 {
			b = append(b, `,"outputDimensionality":`...)
			b = strconv.AppendInt(b, int64(r.Dimensions), 10)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

// GeminiAnswer reads a batchEmbedContents answer,
// {"embeddings":[{"values":[...]}, ...]}, which must hold exactly n vectors.
func GeminiAnswer(body []byte, n int) ([][]float32, error) {
	vs, err := geminiVectors(body, n, false)
	return values(vs), err
}

func geminiVectors(body []byte, n int, raw bool) ([]Vector, error) {
	root, err := answerRoot(body, "gemini")
	if err != nil {
		return nil, err
	}
	return readVectorsAs(root.Get("embeddings"), n, "values", "gemini", raw)
}
