package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// Embeddings workloads: one OpenAI /v1/embeddings request of embedInputs
// short texts, as an indexer sends a batch of chunks, relayed as it is to
// an OpenAI-compatible upstream or translated by the gateway for the
// Gemini API (batchEmbedContents) and Bedrock's Titan (one invoke per
// text).
const (
	embedInputs    = 16
	embedInputSize = 60 // bytes of each text
	// The vector lengths of the fake's answers, as the models they stand
	// for give them: text-embedding-3-small, Gemini's text embeddings at
	// 768 and Titan Text Embeddings v2 at its default.
	embedDimsOpenAI = 1536
	embedDimsGemini = 768
	embedDimsTitan  = 1024
	// embedMaxInputs bounds the inputs of a request the fake answers
	// (OpenAI's limit), and so the answers it keeps.
	embedMaxInputs = 2048
	// titanTokens is the token count the fake Titan reports for every
	// text (a 60-byte English text is about that many).
	titanTokens = 14
	// embedBodySize is about the size of embeddingsBody's request.
	embedBodySize = 1070
)

// embedTexts are the request's texts: distinct, each embedInputSize bytes.
func embedTexts() []string {
	const step = 7
	all := fillerText(embedInputSize + embedInputs*step)
	out := make([]string, embedInputs)
	for i := range out {
		out[i] = all[i*step : i*step+embedInputSize]
	}
	return out
}

// embeddingsBody is an OpenAI embeddings request for model, floats asked
// for explicitly (the API's default; a gateway relays the upstream's
// numbers as they are).
func embeddingsBody(model string) []byte {
	b, err := json.Marshal(struct {
		Model          string   `json:"model"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
	}{model, embedTexts(), "float"})
	if err != nil {
		panic(err)
	}
	return b
}

// embedModel is the model an embeddings workload names: the upstream's
// for a target that relays the body as it is, tollgate's for a gateway.
func (w workload) embedModel(gateway bool) string {
	switch {
	case !gateway:
		return upstreamModelEmbed
	case w.Gemini:
		return tollgateModelEmbedGemini
	case w.Bedrock:
		return tollgateModelEmbedTitan
	}
	return tollgateModelEmbed
}

// embedDims is the length of the vectors the workload's answer carries.
func (w workload) embedDims() int {
	switch {
	case w.Gemini:
		return embedDimsGemini
	case w.Bedrock:
		return embedDimsTitan
	}
	return embedDimsOpenAI
}

// checkEmbeddingsAnswer checks an OpenAI embeddings answer: a list of
// embedInputs vectors of dims floats, in order, with usage.
func checkEmbeddingsAnswer(body []byte, dims int) error {
	var a struct {
		Object string `json:"object"`
		Data   []struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("response is not JSON: %v: %s", err, truncate(string(body), 200))
	}
	if a.Object != "list" || len(a.Data) != embedInputs {
		return fmt.Errorf("not a list of %d embeddings (object %q, %d items): %s", embedInputs, a.Object, len(a.Data), truncate(string(body), 200))
	}
	for i, d := range a.Data {
		if d.Object != "embedding" || d.Index != i || len(d.Embedding) != dims {
			return fmt.Errorf("item %d: object %q, index %d, %d values, want an embedding at %d of %d", i, d.Object, d.Index, len(d.Embedding), i, dims)
		}
	}
	if a.Usage.PromptTokens <= 0 {
		return fmt.Errorf("no usage: %s", truncate(string(body[max(0, len(body)-200):]), 200))
	}
	return nil
}

// fakeEmbeddings are the fake upstream's embeddings answers, rendered
// once: the fake shares the machine with the proxies, so it formats no
// number per request. Every count of inputs gets its answer built on
// first use, from vectors rendered at start, and kept.
type fakeEmbeddings struct {
	openaiVecs, geminiVecs [][]byte // JSON arrays of floats, embedInputs distinct ones
	titan                  []byte   // the whole Titan answer
	titanTokens            string   // its X-Amzn-Bedrock-Input-Token-Count
	openai, gemini         sync.Map // number of inputs → answer
}

func newFakeEmbeddings() *fakeEmbeddings {
	e := &fakeEmbeddings{titanTokens: strconv.Itoa(titanTokens)}
	for i := range embedInputs {
		e.openaiVecs = append(e.openaiVecs, fakeVector(uint64(i), embedDimsOpenAI))
		e.geminiVecs = append(e.geminiVecs, fakeVector(uint64(1000+i), embedDimsGemini))
	}
	e.titan = fmt.Appendf(nil, `{"embedding":%s,"inputTextTokenCount":%d}`, fakeVector(2000, embedDimsTitan), titanTokens)
	return e
}

// fakeVector is a unit vector of dims float32 values derived from seed,
// written as JSON (shortest float32 forms, as the APIs write them).
func fakeVector(seed uint64, dims int) []byte {
	v := make([]float64, dims)
	var sum float64
	for i := range v {
		seed = seed*6364136223846793005 + 1442695040888963407
		v[i] = float64(int32(seed>>33)%20000-10000) / 10000
		sum += v[i] * v[i]
	}
	b := make([]byte, 0, dims*13)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(float32(x/math.Sqrt(sum))), 'g', -1, 32)
	}
	return append(b, ']')
}

// answer returns the kept answer for n inputs, building it the first time.
func answer(m *sync.Map, n int, build func(n int) []byte) []byte {
	if a, ok := m.Load(n); ok {
		return a.([]byte)
	}
	a, _ := m.LoadOrStore(n, build(n))
	return a.([]byte)
}

// openaiAnswer is OpenAI's answer to n inputs, usage included.
func (e *fakeEmbeddings) openaiAnswer(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"object":"list","data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"object":"embedding","index":%d,"embedding":`, i)
		b.Write(e.openaiVecs[i%len(e.openaiVecs)])
		b.WriteByte('}')
	}
	fmt.Fprintf(&b, `],"model":%q,"usage":{"prompt_tokens":%d,"total_tokens":%d}}`, upstreamModelEmbed, n*titanTokens, n*titanTokens)
	return b.Bytes()
}

// geminiAnswer is batchEmbedContents' answer to n requests (no usage: the
// Gemini API gives none).
func (e *fakeEmbeddings) geminiAnswer(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"embeddings":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"values":`)
		b.Write(e.geminiVecs[i%len(e.geminiVecs)])
		b.WriteByte('}')
	}
	b.WriteString("]}")
	return b.Bytes()
}

// serveOpenAI answers POST /v1/embeddings: a vector per input (a string,
// or an array of strings or token arrays) for the upstream's model, so
// that a gateway which does not rewrite the model is caught by the answer
// check rather than measured.
func (e *fakeEmbeddings) serveOpenAI(w http.ResponseWriter, body []byte) {
	res := gjson.GetManyBytes(body, "model", "input")
	model, input := res[0], res[1]
	if model.String() != upstreamModelEmbed {
		openaiError(w, http.StatusNotFound, "The model `"+model.String()+"` does not exist")
		return
	}
	n := 0
	switch {
	case input.Type == gjson.String:
		n = 1
	case input.IsArray():
		tokens := false
		input.ForEach(func(_, v gjson.Result) bool {
			tokens = v.Type == gjson.Number
			n++
			return !tokens
		})
		if tokens {
			n = 1 // one token array: one input
		}
	}
	if n < 1 || n > embedMaxInputs || !input.Exists() {
		openaiError(w, http.StatusBadRequest, "'$.input' is invalid")
		return
	}
	writeJSON(w, answer(&e.openai, n, e.openaiAnswer))
}

// serveGemini answers batchEmbedContents: a vector per request, up to the
// API's 100.
func (e *fakeEmbeddings) serveGemini(w http.ResponseWriter, body []byte) {
	n := int(gjson.GetBytes(body, "requests.#").Int())
	if n < 1 || n > 100 || !strings.HasPrefix(gjson.GetBytes(body, "requests.0.model").String(), "models/") {
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.requests: 1 to 100 requests with a model and content")
		return
	}
	writeJSON(w, answer(&e.gemini, n, e.geminiAnswer))
}

// serveTitan answers amazon.titan-embed-text-v2:0's invoke: one vector,
// its token count in the body and in Bedrock's header.
func (e *fakeEmbeddings) serveTitan(w http.ResponseWriter, body []byte) {
	if gjson.GetBytes(body, "inputText").String() == "" {
		bedrockError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: required key [inputText] not found")
		return
	}
	w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", e.titanTokens)
	writeJSON(w, e.titan)
}

func openaiError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, msg)
}

// bedrockError answers as Bedrock does: the message in the body, the
// error's name in a header.
func bedrockError(w http.ResponseWriter, status int, kind, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-Errortype", kind)
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q}`, msg)
}

// bedrockSigned checks that a Bedrock request is signed with SigV4 by the
// bench's access key for its region and service. The signature itself is
// not computed again: that would charge the fake, which shares the
// machine, an HMAC chain per request.
func bedrockSigned(r *http.Request) error {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 Credential="+bedrockAccessKey+"/")
	switch {
	case !ok:
		return errors.New("Missing Authentication Token")
	case !strings.Contains(rest, "/"+bedrockRegion+"/bedrock/aws4_request,") || !strings.Contains(rest, "SignedHeaders=") ||
		!strings.Contains(rest, "Signature="):
		return errors.New("Credential should be scoped to a valid region and service bedrock, with signed headers and a signature.")
	case r.Header.Get("X-Amz-Date") == "":
		return errors.New("X-Amz-Date is missing.")
	}
	return nil
}
