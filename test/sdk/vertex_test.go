package sdk_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const vertexConfig = `
providers:
  - { name: gcp, type: vertex, project: test-project, region: us-east5, credentials_file: %q, endpoint: %q }
models:
  - { name: claude-vertex, targets: [ { provider: gcp, model: "claude-sonnet-4-5@20250929" } ] }
`

// TestVertexWithTheSDKs: Claude on Vertex AI for an Anthropic client
// (pass-through lane, streamed) and OpenAI Chat and Responses clients
// (translation lane), with access tokens from a service account's key file; the tokens never
// reach the log.
func TestVertexWithTheSDKs(t *testing.T) {
	t.Parallel()
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	t.Cleanup(tokens.Close)
	message, events := upstreamtest.File("anthropic_message.json"), upstreamtest.Events("anthropic_stream.sse")
	srv := newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
		if !tokens.Valid(r.Header.Get("Authorization")) {
			return upstreamtest.Reply{Status: 401, Body: []byte(`{"error":{"code":401,"message":"invalid credentials","status":"UNAUTHENTICATED"}}`)}
		}
		if strings.HasSuffix(r.Path, ":streamRawPredict") {
			return upstreamtest.Reply{Events: events}
		}
		return upstreamtest.Reply{Body: message}
	})
	file := filepath.Join(t.TempDir(), "sa.json")
	os.WriteFile(file, tokens.ServiceAccountJSON(), 0o600)
	base, log := gatewaytest.StartWithLog(t, fmt.Sprintf(vertexConfig, file, srv.URL), masterKey)

	client := anthropicClient(base)
	stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{Model: "claude-vertex", MaxTokens: 64, Messages: userText("weather?")})
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil || acc.Usage.InputTokens != 472 || len(acc.Content) < 2 {
		t.Fatalf("stream: %v %+v", err, acc)
	}
	oai := openAIClient(base)
	got, err := oai.Chat.Completions.New(callContext(t), openai.ChatCompletionNewParams{Model: "claude-vertex",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil || got.Choices[0].Message.Content != "Hi! <b>&</b> How can I help?" {
		t.Fatalf("chat: %v %+v", err, got)
	}
	res, err := oai.Responses.New(callContext(t), responsesParams("claude-vertex"))
	if err != nil || res.OutputText() != "Hi! <b>&</b> How can I help?" || res.Usage.InputTokensDetails.CachedTokens != 2048 {
		t.Fatalf("responses: %v %+v", err, res)
	}
	if last := srv.Last(); !strings.HasSuffix(last.Path, "/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict") ||
		!strings.Contains(string(last.Body), `"anthropic_version":"vertex-2023-10-16"`) {
		t.Errorf("Vertex got %s %s", last.Path, last.Body)
	}
	if tokens.Fetches() != 1 {
		t.Errorf("%d tokens fetched, want 1", tokens.Fetches())
	}
	for _, r := range srv.Requests() {
		assertNoClientKey(t, r)
	}
	if l := log.String(); strings.Contains(l, "ya29.") || strings.Contains(l, "PRIVATE KEY") {
		t.Errorf("a credential in the log:\n%s", l)
	}
}
