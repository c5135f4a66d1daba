package embeddings

import "strings"

// Wire is how one kind of upstream takes embeddings requests that are not
// OpenAI's: the most inputs a request may carry, the request for a batch
// of them, and the vectors (and the tokens, 0 when the upstream reports
// none) read from its answer; raw reads them as the upstream wrote them
// (Vector.Raw), for an answer in floats.
type Wire struct {
	Name     string
	MaxBatch int
	// MaxBytes bounds the text of a request, for an upstream that bounds
	// its tokens; 0 none.
	MaxBytes int
	Request  func(r *Request, model string, inputs []Input) ([]byte, error)
	Answer   func(body []byte, n int, raw bool) (vectors []Vector, tokens int, err error)
}

// Batches cuts inputs into the batches the upstream takes, in order.
func (w *Wire) Batches(inputs []Input) [][2]int { return SplitInputs(inputs, w.MaxBatch, w.MaxBytes) }

// The wires of the upstreams package provider serves embeddings from.
var (
	// Gemini is the Gemini API's batchEmbedContents.
	Gemini = &Wire{Name: "gemini", MaxBatch: GeminiMaxBatch, Request: GeminiRequest,
		Answer: func(body []byte, n int, raw bool) ([]Vector, int, error) {
			v, err := geminiVectors(body, n, raw)
			return v, 0, err
		}}
	// Vertex is a Vertex AI text-embedding model's predict: at most 250
	// texts and 20,000 tokens a request (bounded here at 50,000 bytes of
	// text, 2.5 bytes a token: dense scripts take more tokens a byte).
	Vertex = &Wire{Name: "vertex", MaxBatch: VertexMaxBatch, MaxBytes: 50_000,
		Request: func(r *Request, _ string, inputs []Input) ([]byte, error) { return VertexRequest(r, inputs) },
		Answer:  vertexVectors}
	// VertexOne is Vertex AI's predict for the models that take one
	// instance a request (gemini-embedding-001).
	VertexOne = &Wire{Name: "vertex", MaxBatch: 1, Request: Vertex.Request, Answer: Vertex.Answer}
	// Titan is Amazon Titan Text Embeddings on Bedrock: one input a request.
	Titan = &Wire{Name: "titan", MaxBatch: 1,
		Request: func(r *Request, _ string, inputs []Input) ([]byte, error) { return TitanRequest(r, inputs[0]) },
		Answer: func(body []byte, _ int, raw bool) ([]Vector, int, error) {
			v, tokens, err := titanVector(body, raw)
			if err != nil {
				return nil, 0, err
			}
			return []Vector{v}, tokens, nil
		}}
	// Cohere is Cohere Embed on Bedrock.
	Cohere = &Wire{Name: "cohere", MaxBatch: CohereMaxBatch,
		Request: func(r *Request, _ string, inputs []Input) ([]byte, error) { return CohereRequest(r, inputs) },
		Answer: func(body []byte, n int, raw bool) ([]Vector, int, error) {
			v, err := cohereVectors(body, n, raw)
			return v, 0, err
		}}
)

// BedrockWire is the wire of a Bedrock model id (a base model, a
// cross-region inference profile such as us.cohere.embed-v4:0, or an ARN
// naming one): Titan's or Cohere's embedding models; nil for others.
func BedrockWire(model string) *Wire {
	id := model[strings.LastIndexByte(model, '/')+1:]
	switch {
	case strings.Contains(id, "amazon.titan-embed-text"):
		return Titan
	case strings.Contains(id, "cohere.embed"):
		return Cohere
	}
	return nil
}

// VertexWire is the wire of a Vertex AI embedding model: Gemini's
// embedding models take one input a request, the text-embedding ones
// many.
func VertexWire(model string) *Wire {
	if strings.HasPrefix(model, "gemini-embedding") {
		return VertexOne
	}
	return Vertex
}
