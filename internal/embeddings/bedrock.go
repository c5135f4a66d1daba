package embeddings

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Bedrock InvokeModel bodies for the embedding models: Amazon Titan Text
// Embeddings v2 and Cohere Embed (v3 English and multilingual, v4).

// TitanRequest writes the body for amazon.titan-embed-text-v2:0, which
// embeds one text per call:
//
//	{"inputText":...,"dimensions":N,"normalize":true}
//
// dimensions is left out when r has none, and must be 256, 512 or 1024.
// normalize is Titan's default, written out because OpenAI's vectors are
// unit length and clients rely on it.
func TitanRequest(r *Request, in Input) ([]byte, error) {
	if in.Tokens != nil {
		return nil, errTokens
	}
	if r.Dimensions > 0 {
		if err := oneOf(r.Dimensions, 256, 512, 1024); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, 64+len(in.Text)+len(in.Text)/16)
	b = append(b, `{"inputText":`...)
	b = jsonx.AppendQuote(b, in.Text)
	if r.Dimensions > 0 {
		b = append(b, `,"dimensions":`...)
		b = strconv.AppendInt(b, int64(r.Dimensions), 10)
	}
	return append(b, `,"normalize":true}`...), nil
}

// TitanAnswer reads {"embedding":[...],"inputTextTokenCount":N}.
func TitanAnswer(body []byte) (vector []float32, tokens int, err error) {
	v, tokens, err := titanVector(body, false)
	return v.Values, tokens, err
}

func titanVector(body []byte, raw bool) (Vector, int, error) {
	root, err := answerRoot(body, "titan")
	if err != nil {
		return Vector{}, 0, err
	}
	v, err := readVector(root.Get("embedding"), 0, nil, raw)
	if err != nil {
		return Vector{}, 0, fmt.Errorf("embeddings: titan answer: %w", err)
	}
	tokens, err := count(root.Get("inputTextTokenCount"))
	if err != nil {
		return Vector{}, 0, fmt.Errorf("embeddings: titan answer: inputTextTokenCount: %w", err)
	}
	return v, tokens, nil
}

// CohereMaxBatch is the most texts one Cohere Embed call takes.
const CohereMaxBatch = 96

// cohereInputTypes are the input_type values for text; Cohere requires
// one, and search_document is the default here.
var cohereInputTypes = []string{"search_document", "search_query", "classification", "clustering"}

// CohereRequest writes the body for cohere.embed-english-v3,
// cohere.embed-multilingual-v3 and cohere.embed-v4:
//
//	{"texts":[...],"input_type":"search_document","embedding_types":["float"],"output_dimension":N}
//
// input_type is r.InputType, or search_document when r has none.
// output_dimension is written only when r has dimensions, and must be 256,
// 512, 1024 or 1536: only v4 takes it, so the caller refuses dimensions
// for v3 before calling this.
func CohereRequest(r *Request, inputs []Input) ([]byte, error) {
	if err := checkBatch(inputs, CohereMaxBatch, "cohere"); err != nil {
		return nil, err
	}
	inputType := r.InputType
	switch {
	case inputType == "":
		inputType = "search_document"
	case !slices.Contains(cohereInputTypes, inputType):
		return nil, &Error{Param: "input_type", Message: "input_type: must be search_document, search_query, classification or clustering"}
	}
	if r.Dimensions > 0 {
		if err := oneOf(r.Dimensions, 256, 512, 1024, 1536); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, 96+textSize(inputs))
	b = append(b, `{"texts":[`...)
	for i, in := range inputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendQuote(b, in.Text)
	}
	b = append(b, `],"input_type":"`...)
	b = append(b, inputType...) // one of cohereInputTypes: nothing to escape
	b = append(b, `","embedding_types":["float"]`...)
	if r.Dimensions > 0 {
		b = append(b, `,"output_dimension":`...)
		b = strconv.AppendInt(b, int64(r.Dimensions), 10)
	}
	return append(b, '}'), nil
}

// CohereAnswer reads a Cohere Embed answer holding exactly n vectors:
// "embeddings" is [[...]] (response_type embeddings_floats) or
// {"float":[[...]]} (embeddings_by_type, the answer to embedding_types).
// Bedrock reports Cohere's token count in a header, not in the body.
func CohereAnswer(body []byte, n int) ([][]float32, error) {
	vs, err := cohereVectors(body, n, false)
	return values(vs), err
}

func cohereVectors(body []byte, n int, raw bool) ([]Vector, error) {
	root, err := answerRoot(body, "cohere")
	if err != nil {
		return nil, err
	}
	e := root.Get("embeddings")
	if e.IsObject() {
		e = e.Get("float")
	} else if e.Type != gjson.JSON {
		return nil, errors.New(`embeddings: cohere answer: no "embeddings"`)
	}
	return readVectorsAs(e, n, "", "cohere", raw)
}
