package sdk_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// embeddingsConfig serves embed-oai from an OpenAI-compatible upstream,
// and embed-azure and embed-azure-v1 from Azure OpenAI under its two URL
// schemes (deployments with api-version, and the v1 API).
const embeddingsConfig = `
providers:
  - { name: oai, type: openai, base_url: %q, api_key: %q }
  - { name: az, type: azure-openai, base_url: %q, api_key: az-secret-key, api_version: "2024-10-21" }
  - { name: az1, type: azure-openai, base_url: %q, api_key: az-secret-key }
models:
  - { name: embed-oai, targets: [ { provider: oai, model: text-embedding-3-small } ] }
  - { name: embed-azure, targets: [ { provider: az, model: prod-embed } ] }
  - { name: embed-azure-v1, targets: [ { provider: az1, model: prod-embed } ] }
`

// startEmbeddingsGateway runs the gateway in front of a fake OpenAI
// embeddings API and a fake Azure OpenAI that answers only its own URLs
// with its own key.
func startEmbeddingsGateway(t *testing.T) (string, *upstreamtest.Server, *upstreamtest.Server) {
	t.Helper()
	oai := newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
		if r.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer "+upstreamKey {
			return upstreamtest.Reply{Status: 404, Body: []byte(`{"error":{"message":"not found","type":"invalid_request_error"}}`)}
		}
		return upstreamtest.OpenAIEmbeddings(r, false)
	})
	az := newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
		ok := r.Header.Get("Api-Key") == "az-secret-key" &&
			(r.Path == "/openai/deployments/prod-embed/embeddings" && r.Query == "api-version=2024-10-21" ||
				r.Path == "/openai/v1/embeddings" && r.Query == "")
		if !ok {
			return upstreamtest.Reply{Status: 404, Body: []byte(`{"error":{"code":"404","message":"Resource not found"}}`)}
		}
		return upstreamtest.OpenAIEmbeddings(r, false)
	})
	base := gatewaytest.Start(t, fmt.Sprintf(embeddingsConfig, oai.URL+"/v1", upstreamKey, az.URL+"/openai", az.URL+"/openai/v1"), masterKey)
	return base, oai, az
}

// openai-go's Embeddings.New through the gateway, for every upstream kind
// that serves embeddings as OpenAI does: float and base64 answers,
// dimensions, one text, many texts, token arrays; vectors in input order
// with the upstream's values exactly.
func TestOpenAIEmbeddings(t *testing.T) {
	base, _, az := startEmbeddingsGateway(t)
	client := openAIClient(base)
	type input struct {
		name   string
		params openai.EmbeddingNewParamsInputUnion
		texts  []string // what the fake embeds, in order
	}
	inputs := []input{
		{"one text", openai.EmbeddingNewParamsInputUnion{OfString: openai.String("The food was delicious")}, []string{"The food was delicious"}},
		{"texts", openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first", "second one", "third, the last"}},
			[]string{"first", "second one", "third, the last"}},
		{"tokens", openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: []int64{1820, 25977, 2}}, []string{"1820,25977,2"}},
		{"token arrays", openai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: [][]int64{{1, 2}, {3}, {40000, 5, 6}}},
			[]string{"1,2", "3", "40000,5,6"}},
	}
	for _, model := range []string{"embed-oai", "embed-azure", "embed-azure-v1"} {
		for _, format := range []openai.EmbeddingNewParamsEncodingFormat{openai.EmbeddingNewParamsEncodingFormatFloat, openai.EmbeddingNewParamsEncodingFormatBase64} {
			for _, dims := range []int64{0, 16} {
				for _, in := range inputs {
					name := fmt.Sprintf("%s/%s/dims=%d/%s", model, format, dims, in.name)
					params := openai.EmbeddingNewParams{Model: model, Input: in.params, EncodingFormat: format}
					if dims > 0 {
						params.Dimensions = openai.Int(dims)
					}
					got, err := client.Embeddings.New(callContext(t), params)
					if err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					if len(got.Data) != len(in.texts) {
						t.Errorf("%s: %d vectors, want %d", name, len(got.Data), len(in.texts))
						continue
					}
					n := int(dims)
					if n == 0 {
						n = upstreamtest.EmbeddingDims
					}
					for i, d := range got.Data {
						want := upstreamtest.Embedding(in.texts[i], n)
						if d.Index != int64(i) || len(d.Embedding) != n {
							t.Errorf("%s: vector %d: index %d, length %d", name, i, d.Index, len(d.Embedding))
							continue
						}
						for j := range want {
							if float32(d.Embedding[j]) != want[j] {
								t.Errorf("%s: vector %d value %d = %v, want %v", name, i, j, d.Embedding[j], want[j])
								break
							}
						}
					}
					if got.Usage.PromptTokens == 0 || got.Usage.TotalTokens != got.Usage.PromptTokens {
						t.Errorf("%s: usage %+v", name, got.Usage)
					}
				}
			}
		}
	}
	if n := len(az.Requests()); n != 2*2*2*len(inputs) {
		t.Errorf("Azure saw %d requests, want %d", n, 2*2*2*len(inputs))
	}
}

// A request the gateway refuses reaches the SDK as an OpenAI error with
// the member at fault.
func TestOpenAIEmbeddingsRefused(t *testing.T) {
	base, oai, _ := startEmbeddingsGateway(t)
	client := openAIClient(base)
	_, err := client.Embeddings.New(callContext(t), openai.EmbeddingNewParams{Model: "embed-oai",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", ""}}})
	apiErr := openAIError(t, err, 400)
	if apiErr.Param != "input" || !strings.Contains(apiErr.Message, "input") {
		t.Errorf("refusal: param %q message %q", apiErr.Param, apiErr.Message)
	}
	_, err = client.Embeddings.New(callContext(t), openai.EmbeddingNewParams{Model: "embed-oai",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}}, option.WithAPIKey("sk-wrong"))
	openAIError(t, err, 401)
	if n := len(oai.Requests()); n != 0 {
		t.Errorf("%d refused requests reached the upstream", n)
	}
}

// cloudEmbeddingsConfig serves embeddings from the Gemini API, Vertex AI
// and Bedrock (Titan and Cohere), with a ledger.
const cloudEmbeddingsConfig = `
providers:
  - { name: goog, type: gemini, base_url: %q, api_key: gemini-secret-key }
  - { name: gcp, type: vertex-gemini, project: test-project, region: us-central1, credentials_file: %q, endpoint: %q }
  - { name: aws, type: bedrock, region: us-west-2, access_key_id: AKIDSDKTEST, secret_access_key: sdk-bedrock-secret, endpoint: %q }
models:
  - { name: embed-gemini, targets: [ { provider: goog, model: gemini-embedding-001 } ], pricing: { input: "0.15", output: "0" } }
  - { name: embed-vertex, targets: [ { provider: gcp, model: text-embedding-005 } ], pricing: { input: "0.10", output: "0" } }
  - { name: embed-titan, targets: [ { provider: aws, model: "amazon.titan-embed-text-v2:0" } ], pricing: { input: "0.02", output: "0" } }
  - { name: embed-cohere, targets: [ { provider: aws, model: "cohere.embed-english-v3" } ], pricing: { input: "0.10", output: "0" } }
  - { name: claude-bedrock, targets: [ { provider: aws, model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" } ] }
`

// cloudEmbeddings is a gateway in front of fakes of the Gemini API,
// Vertex AI and Bedrock that check their credentials and paths and
// answer embeddings in their own shapes.
type cloudEmbeddings struct {
	base                string
	gemini, vertex, aws *upstreamtest.Server
}

func startCloudEmbeddings(t *testing.T) *cloudEmbeddings {
	t.Helper()
	gemini := newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
		if r.Header.Get("X-Goog-Api-Key") != "gemini-secret-key" || r.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" {
			return upstreamtest.Reply{Status: 404, Body: []byte(`{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`)}
		}
		return upstreamtest.GeminiEmbeddings(r)
	})
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	t.Cleanup(tokens.Close)
	vertex := newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
		if !tokens.Valid(r.Header.Get("Authorization")) ||
			r.Path != "/v1/projects/test-project/locations/us-central1/publishers/google/models/text-embedding-005:predict" {
			return upstreamtest.Reply{Status: 404, Body: []byte(`{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`)}
		}
		return upstreamtest.VertexEmbeddings(r)
	})
	file := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(file, tokens.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	aws := upstreamtest.NewBedrock(bedrockCreds, func(r upstreamtest.Received) upstreamtest.Reply {
		switch r.Path {
		case "/model/amazon.titan-embed-text-v2:0/invoke":
			return upstreamtest.TitanEmbedding(r)
		case "/model/cohere.embed-english-v3/invoke":
			return upstreamtest.CohereEmbeddings(r)
		}
		return upstreamtest.Reply{Status: 404, Body: []byte(`{"message":"not found"}`)}
	})
	t.Cleanup(aws.Close)
	base := gatewaytest.StartDB(t, fmt.Sprintf(cloudEmbeddingsConfig, gemini.URL, file, vertex.URL, aws.URL), masterKey)
	return &cloudEmbeddings{base: base, gemini: gemini, vertex: vertex, aws: aws}
}

// checkVectors checks an SDK answer against the fake's vectors for texts.
func checkVectors(t *testing.T, name string, got *openai.CreateEmbeddingResponse, texts []string, dims int) {
	t.Helper()
	if len(got.Data) != len(texts) {
		t.Errorf("%s: %d vectors, want %d", name, len(got.Data), len(texts))
		return
	}
	for i, d := range got.Data {
		want := upstreamtest.Embedding(texts[i], dims)
		if d.Index != int64(i) || len(d.Embedding) != dims {
			t.Errorf("%s: vector %d: index %d, length %d, want %d", name, i, d.Index, len(d.Embedding), dims)
			return
		}
		for j := range want {
			if float32(d.Embedding[j]) != want[j] {
				t.Errorf("%s: vector %d value %d = %v, want %v", name, i, j, d.Embedding[j], want[j])
				return
			}
		}
	}
}

// openai-go's Embeddings.New served by the Gemini API, Vertex AI and
// Bedrock's Titan and Cohere models: the request translated into each
// one's shape, the vectors back in OpenAI's (float and base64), in order;
// usage from the upstream where it gives it (Vertex's token counts,
// Bedrock's header), counted locally and marked where it does not
// (Gemini); every request recorded with its endpoint, tokens and cost.
func TestOpenAIEmbeddingsFromTheClouds(t *testing.T) {
	t.Parallel()
	cl := startCloudEmbeddings(t)
	client := openAIClient(cl.base)
	texts := []string{"first", "the second text", "third"}
	for _, c := range []struct {
		model     string
		dims      int64 // asked; 0 none
		vecLen    int   // the fake's vectors
		estimated bool
	}{
		{"embed-gemini", 0, upstreamtest.EmbeddingDims, true},
		{"embed-gemini", 64, 64, true},
		{"embed-vertex", 0, upstreamtest.EmbeddingDims, false},
		{"embed-vertex", 32, 32, false},
		{"embed-titan", 0, 1024, false},
		{"embed-titan", 256, 256, false},
		{"embed-cohere", 0, 1024, false},
	} {
		for _, format := range []openai.EmbeddingNewParamsEncodingFormat{openai.EmbeddingNewParamsEncodingFormatFloat, openai.EmbeddingNewParamsEncodingFormatBase64} {
			name := fmt.Sprintf("%s/dims=%d/%s", c.model, c.dims, format)
			params := openai.EmbeddingNewParams{Model: c.model, EncodingFormat: format,
				Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts}}
			if c.dims > 0 {
				params.Dimensions = openai.Int(c.dims)
			}
			var resp *http.Response
			got, err := client.Embeddings.New(callContext(t), params, option.WithResponseInto(&resp))
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			checkVectors(t, name, got, texts, c.vecLen)
			if got.Usage.PromptTokens <= 0 || got.Usage.TotalTokens != got.Usage.PromptTokens {
				t.Errorf("%s: usage %+v", name, got.Usage)
			}
			if est := resp.Header.Get("Tollgate-Usage") == "estimate"; est != c.estimated {
				t.Errorf("%s: tollgate-usage %q", name, resp.Header.Get("Tollgate-Usage"))
			}
			if !c.estimated && got.Usage.PromptTokens != 5 { // the fakes count words: 1 + 3 + 1
				t.Errorf("%s: prompt tokens %d, want the upstream's 5", name, got.Usage.PromptTokens)
			}
		}
	}
	// Each request's record: the endpoint, the lane, the tokens and their cost.
	records := ledgerRecords(t, cl.base)
	if len(records) == 0 {
		t.Error("no ledger records")
	}
	for _, r := range records {
		tokens, _ := r["tokens"].(map[string]any)
		if in, _ := tokens["input"].(float64); r["endpoint"] != "/v1/embeddings" || r["lane"] != "translated" || in <= 0 ||
			tokens["output"] != 0.0 || r["cost_nano_usd"] == nil {
			t.Errorf("record: %v", r)
		}
	}
	// Gemini got the task type as taskType; Cohere its input type.
	_, err := client.Embeddings.New(callContext(t), openai.EmbeddingNewParams{Model: "embed-gemini",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("q")}},
		option.WithJSONSet("task_type", "RETRIEVAL_QUERY"))
	if err != nil || gjson.GetBytes(cl.gemini.Last().Body, "requests.0.taskType").Str != "RETRIEVAL_QUERY" {
		t.Errorf("task_type: %v %s", err, cl.gemini.Last().Body)
	}
	_, err = client.Embeddings.New(callContext(t), openai.EmbeddingNewParams{Model: "embed-cohere",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("q")}},
		option.WithJSONSet("input_type", "search_query"))
	if err != nil || gjson.GetBytes(cl.aws.Last().Body, "input_type").Str != "search_query" {
		t.Errorf("input_type: %v %s", err, cl.aws.Last().Body)
	}
}

// What the clouds cannot take is refused before they are asked, in
// OpenAI's envelope: token arrays (they take text), Titan's dimensions
// outside 256/512/1024, a Bedrock model that makes no embeddings.
func TestOpenAIEmbeddingsCloudRefusals(t *testing.T) {
	t.Parallel()
	cl := startCloudEmbeddings(t)
	client := openAIClient(cl.base)
	for _, c := range []struct {
		params openai.EmbeddingNewParams
		param  string
	}{
		{openai.EmbeddingNewParams{Model: "embed-gemini", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: []int64{1, 2}}}, "input"},
		{openai.EmbeddingNewParams{Model: "embed-titan", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}, Dimensions: openai.Int(300)}, "dimensions"},
		{openai.EmbeddingNewParams{Model: "claude-bedrock", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}}, "model"},
	} {
		_, err := client.Embeddings.New(callContext(t), c.params)
		if apiErr := openAIError(t, err, 400); apiErr.Param != c.param {
			t.Errorf("%s: param %q (%s)", c.params.Model, apiErr.Param, apiErr.Message)
		}
	}
	if n := len(cl.gemini.Requests()) + len(cl.aws.Requests()); n != 0 {
		t.Errorf("%d refused requests reached an upstream", n)
	}
}

// A batch of 2,048 inputs, more than any of the clouds takes at once, is
// split (Gemini: 21 requests of at most 100; Titan: one request an input,
// a few at a time) and the vectors come back whole and in order.
func TestOpenAIEmbeddingsLargeBatch(t *testing.T) {
	t.Parallel()
	cl := startCloudEmbeddings(t)
	client := openAIClient(cl.base)
	texts := make([]string, embeddingsMaxInputs)
	for i := range texts {
		texts[i] = fmt.Sprintf("input number %d", i)
	}
	for _, c := range []struct {
		model    string
		srv      *upstreamtest.Server
		requests int
		dims     int
	}{
		{"embed-gemini", cl.gemini, 21, upstreamtest.EmbeddingDims},
		{"embed-vertex", cl.vertex, 9, upstreamtest.EmbeddingDims},
		{"embed-titan", cl.aws, embeddingsMaxInputs, 1024},
	} {
		before := len(c.srv.Requests())
		got, err := client.Embeddings.New(callContext(t), openai.EmbeddingNewParams{Model: c.model,
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts}, EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64})
		if err != nil {
			t.Errorf("%s: %v", c.model, err)
			continue
		}
		checkVectors(t, c.model, got, texts, c.dims)
		if n := len(c.srv.Requests()) - before; n != c.requests {
			t.Errorf("%s: %d upstream requests, want %d", c.model, n, c.requests)
		}
	}
	// One input past the limit is the client's error.
	_, err := client.Embeddings.New(callContext(t), openai.EmbeddingNewParams{Model: "embed-gemini",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: append(texts, "one more")}})
	if apiErr := openAIError(t, err, 400); apiErr.Param != "input" {
		t.Errorf("2,049 inputs: %v", apiErr)
	}
}

// embeddingsMaxInputs is OpenAI's limit on inputs per request.
const embeddingsMaxInputs = 2048
