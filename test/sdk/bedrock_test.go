package sdk_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

var bedrockCreds = upstreamtest.BedrockCredentials{AccessKeyID: "AKIDSDKTEST", SecretAccessKey: "sdk-bedrock-secret", Region: "us-west-2"}

const bedrockConfig = `
providers:
  - { name: aws, type: bedrock, region: us-west-2, access_key_id: AKIDSDKTEST, secret_access_key: sdk-bedrock-secret, endpoint: %q }
models:
  - { name: claude-bedrock, targets: [ { provider: aws, model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" } ] }
`

// startBedrockGateway runs the gateway (with a ledger) in front of a fake
// Bedrock that checks every request's signature.
func startBedrockGateway(t *testing.T, reply func(upstreamtest.Received) upstreamtest.Reply) (string, *upstreamtest.Server) {
	t.Helper()
	srv := upstreamtest.NewBedrock(bedrockCreds, reply)
	t.Cleanup(srv.Close)
	return gatewaytest.StartDB(t, fmt.Sprintf(bedrockConfig, srv.URL), masterKey), srv
}

// ledgerRecords reads the gateway's newest records through the admin API.
func ledgerRecords(t *testing.T, base string) []map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/admin/requests?limit=20", nil)
	req.Header.Set("Authorization", "Bearer "+masterKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Data []map[string]any }
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatalf("admin/requests: %s", raw)
	}
	return page.Data
}

// TestBedrockWithTheAnthropicSDK: Claude on Bedrock through the
// pass-through lane, whole and streamed, with its token count, its
// errors in Anthropic's envelope, and the cost in the ledger priced by
// the Bedrock model id.
func TestBedrockWithTheAnthropicSDK(t *testing.T) {
	t.Parallel()
	message, events := upstreamtest.File("anthropic_message.json"), upstreamtest.Events("anthropic_stream.sse")
	base, srv := startBedrockGateway(t, func(r upstreamtest.Received) upstreamtest.Reply {
		switch {
		case strings.Contains(string(r.Body), "throttle me"):
			return upstreamtest.Reply{Status: 429, Header: http.Header{"X-Amzn-Errortype": {"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}},
				Body: []byte(`{"message":"Too many requests, please wait before trying again."}`)}
		case strings.HasSuffix(r.Path, "/count-tokens"):
			return upstreamtest.Reply{Body: []byte(`{"inputTokens":17}`)}
		case strings.HasSuffix(r.Path, "/invoke-with-response-stream"):
			return upstreamtest.Reply{Events: events}
		}
		return upstreamtest.Reply{Body: message}
	})
	client := anthropicClient(base)

	msg, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{Model: "claude-bedrock", MaxTokens: 256, Messages: userText("hi")})
	if err != nil {
		t.Fatalf("Messages.New: %v", err)
	}
	if len(msg.Content) != 2 || msg.Content[1].Text != "Hi! <b>&</b> How can I help?" || msg.Usage.CacheReadInputTokens != 2048 {
		t.Fatalf("message: %+v", msg)
	}
	sent := srv.Last()
	if strings.Contains(string(sent.Body), `"model"`) || !strings.Contains(string(sent.Body), `"anthropic_version":"bedrock-2023-05-31"`) ||
		sent.RawPath != "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke" {
		t.Errorf("Bedrock got %s %s", sent.RawPath, sent.Body)
	}
	assertNoClientKey(t, sent)

	stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{Model: "claude-bedrock", MaxTokens: 256, Messages: userText("weather?")})
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatalf("accumulating: %v", err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if acc.Usage.InputTokens != 472 || acc.Usage.CacheReadInputTokens != 3000 || acc.StopReason == "" || len(acc.Content) < 2 {
		t.Fatalf("streamed message: %+v", acc)
	}

	count, err := client.Messages.CountTokens(callContext(t), anthropic.MessageCountTokensParams{Model: "claude-bedrock",
		Messages: userText("count me")})
	if err != nil || count.InputTokens != 17 {
		t.Fatalf("CountTokens: %+v %v", count, err)
	}

	_, err = client.Messages.New(callContext(t), anthropic.MessageNewParams{Model: "claude-bedrock", MaxTokens: 16, Messages: userText("throttle me")})
	if e := anthropicError(t, err, 429, "rate_limit_error"); !strings.Contains(e.Error(), "Too many requests") {
		t.Errorf("throttled: %v", e)
	}

	// Priced by the catalogue's claude-sonnet-4-5 (the Bedrock id mapped).
	var priced int
	for _, r := range ledgerRecords(t, base) {
		if r["provider"] != "aws" || r["status"] != float64(200) {
			continue
		}
		if r["cost_nano_usd"] == nil || r["upstream_model"] != "us.anthropic.claude-sonnet-4-5-20250929-v1:0" {
			t.Errorf("record %v", r)
		}
		priced++
	}
	if priced < 2 {
		t.Errorf("%d priced Bedrock records, want the message and the stream", priced)
	}
}

// TestBedrockStreamCorruptFrame: a frame whose CRC does not match ends
// the client's stream with an error event, never a made-up completion.
func TestBedrockStreamCorruptFrame(t *testing.T) {
	t.Parallel()
	events := upstreamtest.Events("anthropic_stream.sse")
	base, _ := startBedrockGateway(t, func(upstreamtest.Received) upstreamtest.Reply {
		return upstreamtest.Reply{Events: events, CorruptFrame: 4}
	})
	client := anthropicClient(base)
	stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{Model: "claude-bedrock", MaxTokens: 64, Messages: userText("hi")})
	n := 0
	for stream.Next() {
		if stream.Current().Type == "message_stop" {
			t.Fatal("a cut stream ended as if complete")
		}
		n++
	}
	if stream.Err() == nil || n == 0 {
		t.Fatalf("after %d events: err %v, want the stream's error", n, stream.Err())
	}
}

// bedrockClaude answers as Claude on Bedrock: the recorded stream on
// invoke-with-response-stream, the recorded message on invoke.
func bedrockClaude(r upstreamtest.Received) upstreamtest.Reply {
	if strings.HasSuffix(r.Path, "/invoke-with-response-stream") {
		return upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse")}
	}
	return upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")}
}

// TestBedrockWithTheOpenAISDK: a Chat Completions client on Claude on
// Bedrock goes through the translation lane, whole and streamed.
func TestBedrockWithTheOpenAISDK(t *testing.T) {
	t.Parallel()
	base, srv := startBedrockGateway(t, bedrockClaude)
	client := openAIClient(base)
	got, err := client.Chat.Completions.New(callContext(t), openai.ChatCompletionNewParams{Model: "claude-bedrock",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil {
		t.Fatalf("Chat.Completions.New: %v", err)
	}
	if len(got.Choices) != 1 || got.Choices[0].Message.Content != "Hi! <b>&</b> How can I help?" || got.Usage.PromptTokens != 12+2048 {
		t.Fatalf("completion: %+v", got)
	}
	if body := string(srv.Last().Body); strings.Contains(body, `"model"`) || !strings.Contains(body, `"max_tokens"`) {
		t.Errorf("Bedrock got %s", body)
	}
	stream := client.Chat.Completions.NewStreaming(callContext(t), openai.ChatCompletionNewParams{Model: "claude-bedrock",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather?")}})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].FinishReason == "" {
		t.Fatalf("streamed completion: %+v", acc.ChatCompletion)
	}
}

// TestBedrockWrongSecret: Bedrock refusing the gateway's signature is the
// operator's problem: the client gets upstream_auth_failed (502), not a
// 401 that would say its own key is bad.
func TestBedrockWrongSecret(t *testing.T) {
	t.Parallel()
	srv := upstreamtest.NewBedrock(bedrockCreds, func(upstreamtest.Received) upstreamtest.Reply {
		t.Error("a badly signed request was answered")
		return upstreamtest.Reply{}
	})
	t.Cleanup(srv.Close)
	cfg := strings.Replace(fmt.Sprintf(bedrockConfig, srv.URL), "sdk-bedrock-secret", "not-the-secret", 1)
	client := anthropicClient(gatewaytest.Start(t, cfg, masterKey))
	_, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{Model: "claude-bedrock", MaxTokens: 16, Messages: userText("hi")})
	if e := anthropicError(t, err, 502, ""); !strings.Contains(e.Error(), "upstream_auth_failed") && !strings.Contains(e.Error(), "could not authenticate to the upstream provider") {
		t.Errorf("wrong secret: %v", e)
	}
}

// TestBedrockWithTheResponsesSDK: a Responses client (Codex CLI's
// protocol) on Claude on Bedrock goes through the translation lane,
// whole and streamed, signed like every Bedrock request.
func TestBedrockWithTheResponsesSDK(t *testing.T) {
	t.Parallel()
	base, srv := startBedrockGateway(t, bedrockClaude)
	client := openAIClient(base)
	res, err := client.Responses.New(callContext(t), responsesParams("claude-bedrock"))
	if err != nil {
		t.Fatalf("Responses.New: %v", err)
	}
	if res.OutputText() != "Hi! <b>&</b> How can I help?" || res.Usage.InputTokens != 12+2048 || res.Usage.InputTokensDetails.CachedTokens != 2048 {
		t.Fatalf("response: %s", res.RawJSON())
	}
	if body := string(srv.Last().Body); strings.Contains(body, `"model"`) || !strings.Contains(body, `"anthropic_version":"bedrock-2023-05-31"`) ||
		!strings.Contains(body, `"system":[{"type":"text","text":"Be brief."}]`) {
		t.Errorf("Bedrock got %s", body)
	}
	got := readResponsesStream(t, client.Responses.NewStreaming(callContext(t), responsesParams("claude-bedrock")))
	if got.final == nil || got.text != "Let me check — ünïcödé ✓ 🌦" || got.args != `{"location": "Paris", "unit": "celsius"}` {
		t.Fatalf("stream: text %q, arguments %q, completed %v", got.text, got.args, got.final != nil)
	}
	if !strings.HasSuffix(srv.Last().Path, "/invoke-with-response-stream") {
		t.Errorf("streamed to %s", srv.Last().Path)
	}
}
