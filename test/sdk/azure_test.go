package sdk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const azureConfig = `
providers:
  - { name: az, type: azure-openai, base_url: %q, api_key: az-secret-key, api_version: "2024-10-21" }
models:
  - { name: gpt-azure, targets: [ { provider: az, model: prod-gpt-4o } ] }
`

// Azure's answers carry content-filter results: a first stream chunk with
// no choices and prompt_filter_results, content_filter_results on every
// choice.
var (
	azureCompletion = `{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"}},` +
		`"finish_reason":"stop","index":0,"logprobs":null,"message":{"content":"Hello from Azure.","refusal":null,"role":"assistant"}}],` +
		`"created":1764000000,"id":"chatcmpl-AZ1","model":"gpt-4o-2024-11-20","object":"chat.completion",` +
		`"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}],` +
		`"system_fingerprint":"fp_az","usage":{"completion_tokens":4,"prompt_tokens":11,"total_tokens":15}}`
	azureStream = []string{
		`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}`,
		`{"choices":[{"content_filter_results":{},"delta":{"content":"","refusal":null,"role":"assistant"},"finish_reason":null,"index":0,"logprobs":null}],"created":1764000000,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_az"}`,
		`{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":"Hello "},"finish_reason":null,"index":0,"logprobs":null}],"created":1764000000,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_az"}`,
		`{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":"from Azure."},"finish_reason":null,"index":0,"logprobs":null}],"created":1764000000,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_az"}`,
		`{"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"stop","index":0,"logprobs":null}],"created":1764000000,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_az"}`,
		`{"choices":[],"created":1764000000,"id":"chatcmpl-AZ2","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","usage":{"completion_tokens":4,"prompt_tokens":11,"total_tokens":15}}`,
		`[DONE]`,
	}
	azureFiltered = `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400,` +
		`"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}}`
)

func azureEvents() [][]byte {
	var out [][]byte
	for _, s := range azureStream {
		out = append(out, []byte("data: "+s+"\n\n"))
	}
	return out
}

// startAzureGateway runs the gateway in front of a fake Azure OpenAI that
// answers only its deployment URL with the right api-key and api-version.
func startAzureGateway(t *testing.T) (string, *upstreamtest.Server) {
	t.Helper()
	srv := newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
		switch {
		case r.Header.Get("Api-Key") != "az-secret-key":
			return upstreamtest.Reply{Status: 401, Body: []byte(`{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}`)}
		case r.Path != "/openai/deployments/prod-gpt-4o/chat/completions" || r.Query != "api-version=2024-10-21":
			return upstreamtest.Reply{Status: 404, Body: []byte(`{"error":{"code":"404","message":"Resource not found"}}`)}
		case strings.Contains(string(r.Body), "forbidden words"):
			return upstreamtest.Reply{Status: 400, Body: []byte(azureFiltered)}
		case strings.Contains(string(r.Body), `"stream":true`):
			return upstreamtest.Reply{Events: azureEvents()}
		}
		return upstreamtest.Reply{Body: []byte(azureCompletion)}
	})
	return gatewaytest.Start(t, fmt.Sprintf(azureConfig, srv.URL+"/openai"), masterKey), srv
}

// TestAzureWithTheOpenAISDK: the pass-through lane keeps Azure's
// content-filter fields; a content-filter refusal is the OpenAI error
// Azure sent.
func TestAzureWithTheOpenAISDK(t *testing.T) {
	t.Parallel()
	base, srv := startAzureGateway(t)
	client := openAIClient(base)
	got, err := client.Chat.Completions.New(callContext(t), openai.ChatCompletionNewParams{Model: "gpt-azure",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil {
		t.Fatalf("Chat.Completions.New: %v", err)
	}
	if got.Choices[0].Message.Content != "Hello from Azure." || !strings.Contains(got.RawJSON(), `"prompt_filter_results"`) ||
		!strings.Contains(got.RawJSON(), `"content_filter_results"`) {
		t.Fatalf("completion: %s", got.RawJSON())
	}
	if body := string(srv.Last().Body); !strings.Contains(body, `"model":"prod-gpt-4o"`) {
		t.Errorf("Azure got %s", body)
	}
	assertNoClientKey(t, srv.Last())

	stream := client.Chat.Completions.NewStreaming(callContext(t), openai.ChatCompletionNewParams{Model: "gpt-azure",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var text strings.Builder
	for stream.Next() {
		if c := stream.Current(); len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil || text.String() != "Hello from Azure." {
		t.Fatalf("stream: %v %q", err, text.String())
	}

	_, err = client.Chat.Completions.New(callContext(t), openai.ChatCompletionNewParams{Model: "gpt-azure",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("forbidden words")}})
	if e := openAIError(t, err, 400); e.Code != "content_filter" {
		t.Fatalf("content filter: %v", err)
	}
}

// TestAzureWithTheAnthropicSDK: the translation lane reads Azure's
// answers, its stream's choice-less chunks and its content-filter error.
func TestAzureWithTheAnthropicSDK(t *testing.T) {
	t.Parallel()
	base, _ := startAzureGateway(t)
	client := anthropicClient(base)
	msg, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{Model: "gpt-azure", MaxTokens: 64, Messages: userText("hi")})
	if err != nil {
		t.Fatalf("Messages.New: %v", err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Hello from Azure." || msg.Usage.InputTokens != 11 || msg.StopReason != "end_turn" {
		t.Fatalf("message: %+v", msg)
	}
	stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{Model: "gpt-azure", MaxTokens: 64, Messages: userText("hi")})
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil || len(acc.Content) != 1 || acc.Content[0].Text != "Hello from Azure." || acc.Usage.OutputTokens != 4 {
		t.Fatalf("stream: %v %+v", err, acc)
	}
	_, err = client.Messages.New(callContext(t), anthropic.MessageNewParams{Model: "gpt-azure", MaxTokens: 64, Messages: userText("forbidden words")})
	if e := anthropicError(t, err, 400, "invalid_request_error"); !strings.Contains(e.Error(), "content management policy") {
		t.Errorf("content filter: %v", e)
	}
}

// TestAzureWithTheResponsesSDK: a Responses client on a chat deployment
// (translation lane, whole and streamed, content-filter fields and all),
// and on azure-openai-responses: Azure's v1 Responses API with an Entra
// ID token, the pass-through lane.
func TestAzureWithTheResponsesSDK(t *testing.T) {
	t.Parallel()
	t.Run("chat deployment", func(t *testing.T) {
		t.Parallel()
		base, _ := startAzureGateway(t)
		client := openAIClient(base)
		res, err := client.Responses.New(callContext(t), responsesParams("gpt-azure"))
		if err != nil || res.OutputText() != "Hello from Azure." || res.Usage.InputTokens != 11 || res.Status != "completed" {
			t.Fatalf("response: %v %+v", err, res)
		}
		got := readResponsesStream(t, client.Responses.NewStreaming(callContext(t), responsesParams("gpt-azure")))
		if got.final == nil || got.text != "Hello from Azure." || got.final.Usage.OutputTokens != 4 {
			t.Fatalf("stream: %+v", got)
		}
	})
	t.Run("responses API", func(t *testing.T) {
		t.Parallel()
		srv := newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
			switch {
			case r.Header.Get("Authorization") != "Bearer entra-token-value" || r.Header.Get("Api-Key") != "":
				return upstreamtest.Reply{Status: 401, Body: []byte(`{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}`)}
			case r.Path != "/openai/v1/responses" || !strings.Contains(string(r.Body), `"model":"prod-codex"`):
				return upstreamtest.Reply{Status: 404, Body: []byte(`{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}`)}
			}
			return upstreamtest.Reply{Body: upstreamtest.File("responses.json")}
		})
		base := gatewaytest.Start(t, fmt.Sprintf(`
providers:
  - { name: azr, type: azure-openai-responses, base_url: %q, entra_token: entra-token-value }
models:
  - { name: codex-azure, targets: [ { provider: azr, model: prod-codex } ] }
`, srv.URL+"/openai/v1"), masterKey)
		client := openAIClient(base)
		res, err := client.Responses.New(callContext(t), responsesParams("codex-azure"))
		if err != nil {
			t.Fatalf("Responses.New: %v", err)
		}
		checkCodexAnswer(t, res)
		assertNoClientKey(t, srv.Last())
	})
}
