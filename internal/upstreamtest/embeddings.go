package upstreamtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
)

// EmbeddingDims is the length of the fake upstreams' vectors when the
// request names no dimensions.
const EmbeddingDims = 8

// Embedding is the vector the fake upstreams give text (or a token array,
// written as its decimal tokens joined by commas): dims values derived
// from its hash, so a test can tell vectors apart and check their order.
func Embedding(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	seed := h.Sum64()
	v := make([]float32, dims)
	for i := range v {
		seed = seed*6364136223846793005 + 1442695040888963407
		v[i] = float32(int32(seed>>33)%2000-1000) / 1000
	}
	return v
}

// TokensText is the text Embedding takes for a token array.
func TokensText(tokens []int64) string {
	b := []byte{}
	for i, t := range tokens {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, t, 10)
	}
	return string(b)
}

// OpenAIEmbeddings answers an OpenAI embeddings request as OpenAI does:
// a vector per input in order, floats or base64 (encoding_format), of
// the dimensions asked, with usage (a token a word, at least one an
// input) unless noUsage. A request it cannot read gets OpenAI's 400.
func OpenAIEmbeddings(r Received, noUsage bool) Reply {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil || req.Model == "" {
		return openAIBadRequest("could not parse the JSON body of your request")
	}
	texts, tokens, err := embeddingInputs(req.Input)
	if err != nil {
		return openAIBadRequest(err.Error())
	}
	dims := EmbeddingDims
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	out := struct {
		Object string         `json:"object"`
		Data   []item         `json:"data"`
		Model  string         `json:"model"`
		Usage  map[string]int `json:"usage,omitempty"`
	}{Object: "list", Model: req.Model}
	for i, t := range texts {
		v := Embedding(t, dims)
		var e any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, f := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(f))
			}
			e = base64.StdEncoding.EncodeToString(b)
		}
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: e})
	}
	if !noUsage {
		out.Usage = map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}
	}
	body, _ := json.Marshal(out)
	return Reply{Body: body}
}

// embeddingInputs reads input in each of OpenAI's four shapes, and counts
// its tokens as the fake does.
func embeddingInputs(raw json.RawMessage) (texts []string, tokens int, err error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, words(one), nil
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, s := range many {
			tokens += words(s)
		}
		return many, tokens, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		return []string{TokensText(ids)}, len(ids), nil
	}
	var idLists [][]int64
	if json.Unmarshal(raw, &idLists) == nil {
		for _, l := range idLists {
			texts = append(texts, TokensText(l))
			tokens += len(l)
		}
		return texts, tokens, nil
	}
	return nil, 0, fmt.Errorf("'$.input' is invalid")
}

func words(s string) int {
	n, in := 0, false
	for _, c := range s {
		if c == ' ' {
			in = false
		} else if !in {
			in, n = true, n+1
		}
	}
	return max(n, 1)
}

func openAIBadRequest(msg string) Reply {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
	return Reply{Status: 400, Body: body}
}

// GeminiEmbeddings answers the Gemini API's batchEmbedContents: a vector
// per request's text parts (joined), of its outputDimensionality. Gemini
// reports no usage.
func GeminiEmbeddings(r Received) Reply {
	var req struct {
		Requests []struct {
			Model   string `json:"model"`
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
			TaskType             string `json:"taskType"`
			OutputDimensionality int    `json:"outputDimensionality"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil || len(req.Requests) == 0 || len(req.Requests) > 100 {
		return googleBadRequest("Invalid JSON payload received, or not 1 to 100 requests.")
	}
	type values struct {
		Values []float32 `json:"values"`
	}
	var out struct {
		Embeddings []values `json:"embeddings"`
	}
	for _, q := range req.Requests {
		if len(q.Model) < len("models/") || q.Model[:len("models/")] != "models/" || len(q.Content.Parts) == 0 {
			return googleBadRequest("* BatchEmbedContentsRequest.requests: model or content is missing")
		}
		text := ""
		for _, p := range q.Content.Parts {
			text += p.Text
		}
		out.Embeddings = append(out.Embeddings, values{Embedding(text, dimsOr(q.OutputDimensionality))})
	}
	body, _ := json.Marshal(out)
	return Reply{Body: body}
}

// VertexEmbeddings answers a Vertex AI text-embedding model's predict:
// a prediction per instance with its vector and token count.
func VertexEmbeddings(r Received) Reply {
	var req struct {
		Instances []struct {
			Content  string `json:"content"`
			TaskType string `json:"task_type"`
		} `json:"instances"`
		Parameters struct {
			OutputDimensionality int `json:"outputDimensionality"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil || len(req.Instances) == 0 || len(req.Instances) > 250 {
		return googleBadRequest("Invalid JSON payload received, or not 1 to 250 instances.")
	}
	type stats struct {
		Truncated  bool `json:"truncated"`
		TokenCount int  `json:"token_count"`
	}
	type prediction struct {
		Embeddings struct {
			Statistics stats     `json:"statistics"`
			Values     []float32 `json:"values"`
		} `json:"embeddings"`
	}
	var out struct {
		Predictions []prediction   `json:"predictions"`
		Metadata    map[string]int `json:"metadata"`
	}
	chars := 0
	for _, in := range req.Instances {
		var p prediction
		p.Embeddings.Values = Embedding(in.Content, dimsOr(req.Parameters.OutputDimensionality))
		p.Embeddings.Statistics.TokenCount = words(in.Content)
		out.Predictions = append(out.Predictions, p)
		chars += len(in.Content)
	}
	out.Metadata = map[string]int{"billableCharacterCount": chars}
	body, _ := json.Marshal(out)
	return Reply{Body: body}
}

// TitanEmbedding answers Bedrock's Titan Text Embeddings v2: one text,
// dimensions 256, 512 or 1024 (the default).
func TitanEmbedding(r Received) Reply {
	var req struct {
		InputText  *string `json:"inputText"`
		Dimensions int     `json:"dimensions"`
		Normalize  *bool   `json:"normalize"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil || req.InputText == nil || *req.InputText == "" {
		return bedrockValidation("Malformed input request: required key [inputText] not found")
	}
	dims := 1024
	switch req.Dimensions {
	case 0:
	case 256, 512, 1024:
		dims = req.Dimensions
	default:
		return bedrockValidation("Malformed input request: #/dimensions: " + strconv.Itoa(req.Dimensions) + " is not a valid enum value")
	}
	v := Embedding(*req.InputText, dims)
	body, _ := json.Marshal(map[string]any{"embedding": v, "embeddingsByType": map[string]any{"float": v}, "inputTextTokenCount": words(*req.InputText)})
	return Reply{Body: body, Header: bedrockTokens(words(*req.InputText))}
}

// CohereEmbeddings answers Bedrock's Cohere Embed: up to 96 texts,
// embeddings by type when embedding_types is given; the token count in
// Bedrock's header only.
func CohereEmbeddings(r Received) Reply {
	var req struct {
		Texts          []string `json:"texts"`
		InputType      string   `json:"input_type"`
		EmbeddingTypes []string `json:"embedding_types"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil || len(req.Texts) == 0 || len(req.Texts) > 96 || req.InputType == "" {
		return bedrockValidation("Malformed input request: texts (1 to 96) and input_type are required")
	}
	vectors := make([][]float32, len(req.Texts))
	n := 0
	for i, t := range req.Texts {
		vectors[i] = Embedding(t, 1024)
		n += words(t)
	}
	out := map[string]any{"id": "emb-1", "texts": req.Texts, "response_type": "embeddings_floats", "embeddings": vectors}
	if len(req.EmbeddingTypes) > 0 {
		out["response_type"], out["embeddings"] = "embeddings_by_type", map[string]any{"float": vectors}
	}
	body, _ := json.Marshal(out)
	return Reply{Body: body, Header: bedrockTokens(n)}
}

func dimsOr(n int) int {
	if n > 0 {
		return n
	}
	return EmbeddingDims
}

// bedrockTokens are the token-count headers Bedrock's InvokeModel answers carry.
func bedrockTokens(in int) http.Header {
	return http.Header{"Content-Type": {"application/json"}, "X-Amzn-Bedrock-Input-Token-Count": {strconv.Itoa(in)}}
}

func bedrockValidation(msg string) Reply {
	body, _ := json.Marshal(map[string]string{"message": msg})
	return Reply{Status: 400, Body: body, Header: http.Header{"Content-Type": {"application/json"}, "X-Amzn-Errortype": {"ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}}
}

func googleBadRequest(msg string) Reply {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}})
	return Reply{Status: 400, Body: body}
}
