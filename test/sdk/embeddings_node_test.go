package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// embeddingsJSResult is what testdata/embeddings.mjs prints.
type embeddingsJSResult struct {
	AISDK struct {
		Embeddings [][]float64 `json:"embeddings"`
		Tokens     int         `json:"tokens"`
	} `json:"aiSdk"`
	AISDKOne       []float64   `json:"aiSdkOne"`
	LangChain      [][]float64 `json:"langchain"`
	LangChainQuery []float64   `json:"langchainQuery"`
	BadKey         any         `json:"badKey"`
}

// TestEmbeddingsJavaScript drives the AI SDK's embedMany and embed and
// LangChain's OpenAIEmbeddings (documents and a query) through the
// gateway, on an OpenAI-compatible upstream and on the Gemini API (the
// translation lane), 600 texts each (LangChain sends them in two
// requests, Gemini takes them in six): every vector comes back in order,
// with the upstream's values.
func TestEmbeddingsJavaScript(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts node: go test without -short runs it")
	}
	prefix := needTool(t, "TOLLGATE_TEST_EMBEDDINGS_JS", "the npm prefix the AI SDK and LangChain are installed under")
	script, err := filepath.Abs("testdata/embeddings.mjs")
	if err != nil {
		t.Fatal(err)
	}
	base, _, _ := startEmbeddingsGateway(t)
	cloud := startCloudEmbeddings(t)
	texts := make([]string, 600)
	for i := range texts {
		texts[i] = fmt.Sprintf("document %d: some words about it", i)
	}
	textsJSON, _ := json.Marshal(texts)
	for _, c := range []struct{ base, model string }{{base, "embed-oai"}, {cloud.base, "embed-gemini"}} {
		t.Run(c.model, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", script)
			cmd.Env = append(os.Environ(), "EMBEDDINGS_JS="+prefix, "GATEWAY="+c.base, "KEY="+masterKey, "MODEL="+c.model, "TEXTS="+string(textsJSON))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node: %v\n%s", err, stderr.String())
			}
			var got embeddingsJSResult
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("output: %v\n%s", err, stdout.String())
			}
			same := func(what string, v []float64, text string) {
				t.Helper()
				want := upstreamtest.Embedding(text, upstreamtest.EmbeddingDims)
				if len(v) != len(want) {
					t.Fatalf("%s: %d values, want %d", what, len(v), len(want))
				}
				for j := range want {
					if float32(v[j]) != want[j] {
						t.Fatalf("%s: value %d = %v, want %v", what, j, v[j], want[j])
					}
				}
			}
			if len(got.AISDK.Embeddings) != len(texts) || len(got.LangChain) != len(texts) {
				t.Fatalf("AI SDK %d vectors, LangChain %d, want %d each", len(got.AISDK.Embeddings), len(got.LangChain), len(texts))
			}
			for i, text := range texts {
				same(fmt.Sprintf("embedMany %d", i), got.AISDK.Embeddings[i], text)
				same(fmt.Sprintf("embedDocuments %d", i), got.LangChain[i], text)
			}
			same("embed", got.AISDKOne, texts[0])
			same("embedQuery", got.LangChainQuery, texts[0])
			if got.AISDK.Tokens <= 0 {
				t.Errorf("AI SDK usage: %d tokens", got.AISDK.Tokens)
			}
			if got.BadKey != 401.0 {
				t.Errorf("a wrong key through LangChain: %v", got.BadKey)
			}
		})
	}
}
