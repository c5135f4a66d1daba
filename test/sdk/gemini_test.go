package sdk_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const geminiConfig = `
providers:
  - { name: goog, type: gemini, base_url: %q, api_key: gemini-secret-key }
models:
  - { name: gemini-test, targets: [ { provider: goog, model: gemini-3-pro-preview } ] }
`

// geminiSignature is the thought signature the fake Gemini puts on the
// first of its parallel function calls, and insists on getting back.
const geminiSignature = "CiQBVKhc7sigParisLondon=="

// fakeGemini answers as the Gemini API does: thoughts and two parallel
// function calls (the first signed) for a question, text once the
// function responses come, a 400 like Gemini 3's when a model turn's
// function call comes back without its signature, and a blocked prompt.
func fakeGemini(t *testing.T) *upstreamtest.Server {
	return fakeGeminiAt(t, "/v1beta/models/gemini-3-pro-preview:", func(h http.Header) bool { return h.Get("X-Goog-Api-Key") == "gemini-secret-key" })
}

// geminiCount answers countTokens as the Gemini API does (the request
// in generateContentRequest, which names its model) or as Vertex AI does
// (the request's members, without toolConfig): 10 tokens a part, 3 for a
// system instruction, 5 a function declaration.
func geminiCount(body gjson.Result) upstreamtest.Reply {
	if g := body.Get("generateContentRequest"); g.Exists() {
		if g.Get("model").Str != "models/gemini-3-pro-preview" {
			return upstreamtest.Reply{Status: 400, Body: []byte(`{"error":{"code":400,"message":"* GenerateContentRequest.model: unexpected model name format","status":"INVALID_ARGUMENT"}}`)}
		}
		body = g
	} else if body.Get("toolConfig").Exists() {
		return upstreamtest.Reply{Status: 400, Body: []byte(`{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"toolConfig\": Cannot find field.","status":"INVALID_ARGUMENT"}}`)}
	}
	n := 0
	for _, c := range body.Get("contents").Array() {
		n += 10 * len(c.Get("parts").Array())
	}
	if body.Get("systemInstruction").Exists() {
		n += 3
	}
	n += 5 * len(body.Get("tools.0.functionDeclarations").Array())
	return upstreamtest.Reply{Body: []byte(fmt.Sprintf(`{"totalTokens":%d,"promptTokensDetails":[{"modality":"TEXT","tokenCount":%d}]}`, n, n))}
}

// TestGeminiCountTokens: count_tokens (Anthropic) and input_tokens
// (Responses) on a Gemini model are Gemini's own countTokens of the
// translated prompt, system instruction and tools included.
func TestGeminiCountTokens(t *testing.T) {
	t.Parallel()
	for _, g := range geminiBackends(t) {
		t.Run(g.name, func(t *testing.T) {
			ant := anthropicClient(g.base)
			n, err := ant.Messages.CountTokens(callContext(t), anthropic.MessageCountTokensParams{Model: "gemini-test", Messages: userText("weather?"),
				System:     anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String("Be brief.")},
				Tools:      []anthropic.MessageCountTokensToolUnionParam{{OfTool: geminiWeatherTool.OfTool}},
				ToolChoice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}})
			if err != nil || n.InputTokens != 10+3+5 {
				t.Fatalf("count_tokens: %v %+v", err, n)
			}
			if p := g.srv.Last().Path; !strings.HasSuffix(p, ":countTokens") {
				t.Errorf("counted at %s", p)
			}
			oai := openAIClient(g.base)
			in, err := oai.Responses.InputTokens.Count(callContext(t), responses.InputTokenCountParams{Model: openai.String("gemini-test"),
				Instructions: openai.String("Be brief."), Input: responses.InputTokenCountParamsInputUnion{OfString: openai.String("weather?")}})
			if err != nil || in.InputTokens != 10+3 {
				t.Fatalf("input_tokens: %v %+v", err, in)
			}
		})
	}
}

// geminiBackend is a gateway in front of a fake Gemini.
type geminiBackend struct {
	name string
	base string
	srv  *upstreamtest.Server
}

// geminiBackends are the two ways to reach Gemini: the Gemini API with an
// API key, and Vertex AI with a service account's access tokens; the
// model is gemini-test on each.
func geminiBackends(t *testing.T) []geminiBackend {
	api := fakeGemini(t)
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	t.Cleanup(tokens.Close)
	vertex := fakeGeminiAt(t, "/v1/projects/test-project/locations/global/publishers/google/models/gemini-3-pro-preview:",
		func(h http.Header) bool { return tokens.Valid(h.Get("Authorization")) })
	file := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(file, tokens.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	return []geminiBackend{
		{"gemini", gatewaytest.Start(t, fmt.Sprintf(geminiConfig, api.URL), masterKey), api},
		{"vertex-gemini", gatewaytest.Start(t, fmt.Sprintf(vertexGeminiConfig, file, vertex.URL), masterKey), vertex},
	}
}

const vertexGeminiConfig = `
providers:
  - { name: gcp, type: vertex-gemini, project: test-project, region: global, credentials_file: %q, endpoint: %q }
models:
  - { name: gemini-test, targets: [ { provider: gcp, model: gemini-3-pro-preview } ] }
`

// fakeGeminiAt is fakeGemini serving the model at path (ending in ":"),
// to requests whose headers authorized accepts.
func fakeGeminiAt(t *testing.T, path string, authorized func(http.Header) bool) *upstreamtest.Server {
	return newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
		body := gjson.ParseBytes(r.Body)
		switch {
		case !authorized(r.Header):
			return upstreamtest.Reply{Status: 403, Body: []byte(`{"error":{"code":403,"message":"API key not valid.","status":"PERMISSION_DENIED"}}`)}
		case !strings.HasPrefix(r.Path, path):
			return upstreamtest.Reply{Status: 404, Body: []byte(`{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`)}
		case strings.HasSuffix(r.Path, ":countTokens"):
			return geminiCount(body)
		case strings.Contains(string(r.Body), "forbidden"):
			return upstreamtest.Reply{Body: []byte(`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":5}}`)}
		}
		for i, c := range body.Get("contents").Array() {
			for _, p := range c.Get("parts").Array() {
				if p.Get("functionCall").Exists() && p.Get("functionCall.args.city").Str == "Paris" && p.Get("thoughtSignature").Str != geminiSignature {
					return upstreamtest.Reply{Status: 400, Body: []byte(fmt.Sprintf(`{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts. contents[%d]","status":"INVALID_ARGUMENT"}}`, i))}
				}
			}
		}
		answered := strings.Contains(string(r.Body), `"functionResponse"`)
		stream := strings.HasSuffix(r.Path, ":streamGenerateContent") && r.Query == "alt=sse"
		var chunks []string
		if answered {
			chunks = []string{
				`{"candidates":[{"content":{"parts":[{"text":"Paris is warmer "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":300}}`,
				`{"candidates":[{"content":{"parts":[{"text":"than London."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":300,"cachedContentTokenCount":200,"candidatesTokenCount":7,"totalTokenCount":307}}`,
			}
		} else {
			chunks = []string{
				`{"candidates":[{"content":{"parts":[{"text":"Two cities: two calls.","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":120}}`,
				`{"candidates":[{"content":{"parts":[{"functionCall":{"id":"c1","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"` + geminiSignature + `"},{"functionCall":{"id":"c2","name":"get_weather","args":{"city":"London"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":120,"candidatesTokenCount":20,"thoughtsTokenCount":30,"totalTokenCount":170}}`,
			}
		}
		if stream {
			var events [][]byte
			for _, c := range chunks {
				events = append(events, []byte("data: "+c+"\r\n\r\n"))
			}
			return upstreamtest.Reply{Events: events}
		}
		// A whole answer holds every part.
		var parts []string
		for _, c := range chunks {
			for _, p := range gjson.Get(c, "candidates.0.content.parts").Array() {
				parts = append(parts, p.Raw)
			}
		}
		last := chunks[len(chunks)-1]
		return upstreamtest.Reply{Body: []byte(`{"candidates":[{"content":{"parts":[` + strings.Join(parts, ",") + `],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":` +
			gjson.Get(last, "usageMetadata").Raw + `,"modelVersion":"gemini-3-pro-preview","responseId":"r-1"}`)}
	})
}

var geminiWeatherTool = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Weather for a city"),
	InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}}}}

// TestGeminiWithTheAnthropicSDK: a tool loop of an Anthropic client on a
// Gemini model, whole and streamed: the thought signature Gemini put on
// its first parallel call reaches the client sealed in a thinking block,
// and comes back to Gemini on that call in the next turn (Gemini 3
// refuses the turn otherwise).
func TestGeminiWithTheAnthropicSDK(t *testing.T) {
	t.Parallel()
	backends := geminiBackends(t)
	for _, g := range backends {
		srv, client := g.srv, anthropicClient(g.base)
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", g.name, streamed), func(t *testing.T) {
				params := anthropic.MessageNewParams{Model: "gemini-test", MaxTokens: 1024, Tools: []anthropic.ToolUnionParam{geminiWeatherTool},
					Thinking: anthropic.ThinkingConfigParamOfEnabled(512), Messages: userText("Is Paris warmer than London?")}
				first := send(t, client, params, streamed)
				var calls []anthropic.ToolUseBlock
				sealed := 0
				for _, b := range first.Content {
					switch v := b.AsAny().(type) {
					case anthropic.ToolUseBlock:
						calls = append(calls, v)
					case anthropic.ThinkingBlock:
						if strings.HasPrefix(v.Signature, "tollgate.r1.") {
							sealed++
						}
					}
				}
				if first.StopReason != "tool_use" || len(calls) != 2 || sealed != 1 || calls[0].ID != "c1" {
					t.Fatalf("first turn: %+v", first)
				}
				if first.Usage.OutputTokens != 50 {
					t.Errorf("output tokens %d, want 20 + 30 thoughts", first.Usage.OutputTokens)
				}
				// The next turn, as any agent sends it: the whole assistant
				// message back, and the results.
				params.Messages = append(params.Messages, first.ToParam(), anthropic.NewUserMessage(
					anthropic.NewToolResultBlock(calls[0].ID, "21C", false), anthropic.NewToolResultBlock(calls[1].ID, "14C", false)))
				second := send(t, client, params, streamed)
				if second.StopReason != "end_turn" || len(second.Content) != 1 || second.Content[0].Text != "Paris is warmer than London." ||
					second.Usage.CacheReadInputTokens != 200 || second.Usage.InputTokens != 100 {
					t.Fatalf("second turn: %+v", second)
				}
				sent := gjson.ParseBytes(srv.Last().Body)
				if sent.Get("contents.1.parts.0.thoughtSignature").Str != geminiSignature || sent.Get("contents.2.parts.1.functionResponse.response.result").Str != "14C" {
					t.Errorf("Gemini got %s", srv.Last().Body)
				}
			})
		}
	}
	srv, client := backends[0].srv, anthropicClient(backends[0].base)

	// A turn whose call lost its signature is Gemini's 400, in Anthropic's envelope.
	_, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{Model: "gemini-test", MaxTokens: 64, Tools: []anthropic.ToolUnionParam{geminiWeatherTool},
		Messages: []anthropic.MessageParam{userText("weather?")[0],
			anthropic.NewAssistantMessage(anthropic.NewThinkingBlock("tollgate.r1.forged.AAAA", "x"), anthropic.NewToolUseBlock("c1", map[string]any{"city": "Paris"}, "get_weather")),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock("c1", "21C", false))}})
	if e := anthropicError(t, err, 400, "invalid_request_error"); !strings.Contains(e.Error(), "thought_signature") {
		t.Errorf("an unsigned call: %v", e)
	}
	// A prompt Gemini blocks is a refusal.
	msg, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{Model: "gemini-test", MaxTokens: 64, Messages: userText("forbidden words")})
	if err != nil || msg.StopReason != "refusal" || len(msg.Content) != 0 {
		t.Fatalf("blocked prompt: %v %+v", err, msg)
	}
	assertNoClientKey(t, srv.Last())
}

// send makes one request, whole or streamed, and returns the message.
func send(t *testing.T, client anthropic.Client, params anthropic.MessageNewParams, streamed bool) anthropic.Message {
	t.Helper()
	if !streamed {
		m, err := client.Messages.New(callContext(t), params)
		if err != nil {
			t.Fatalf("Messages.New: %v", err)
		}
		return *m
	}
	stream := client.Messages.NewStreaming(callContext(t), params)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatalf("accumulating: %v", err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return acc
}

// TestGeminiWithTheOpenAISDK: the same tool loop from a Chat Completions
// client: the signature rides on the tool call's id, which every agent
// sends back with its call and its result.
func TestGeminiWithTheOpenAISDK(t *testing.T) {
	t.Parallel()
	backends := geminiBackends(t)
	for _, g := range backends {
		srv, client := g.srv, openAIClient(g.base)
		tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}})}
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", g.name, streamed), func(t *testing.T) {
				msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Is Paris warmer than London?")}
				params := openai.ChatCompletionNewParams{Model: "gemini-test", Tools: tools, Messages: msgs, ReasoningEffort: "low"}
				first := chatTurn(t, client, params, streamed)
				calls := first.Choices[0].Message.ToolCalls
				if first.Choices[0].FinishReason != "tool_calls" || len(calls) != 2 || !strings.HasPrefix(calls[0].ID, "c1~tollgate.r1.") || calls[1].ID != "c2" {
					t.Fatalf("first turn: %+v", first.Choices[0])
				}
				params.Messages = append(params.Messages, first.Choices[0].Message.ToParam(),
					openai.ToolMessage("21C", calls[0].ID), openai.ToolMessage("14C", calls[1].ID))
				second := chatTurn(t, client, params, streamed)
				if second.Choices[0].Message.Content != "Paris is warmer than London." || second.Usage.PromptTokens != 300 ||
					second.Usage.PromptTokensDetails.CachedTokens != 200 {
					t.Fatalf("second turn: %+v %+v", second.Choices[0], second.Usage)
				}
				sent := gjson.ParseBytes(srv.Last().Body)
				if sent.Get("contents.1.parts.0.thoughtSignature").Str != geminiSignature || sent.Get("contents.2.parts.0.functionResponse.id").Str != "c1" {
					t.Errorf("Gemini got %s", srv.Last().Body)
				}
			})
		}
	}
}

// chatTurn makes one chat request, whole or streamed (accumulated).
func chatTurn(t *testing.T, client openai.Client, params openai.ChatCompletionNewParams, streamed bool) *openai.ChatCompletion {
	t.Helper()
	if !streamed {
		c, err := client.Chat.Completions.New(callContext(t), params)
		if err != nil {
			t.Fatalf("Chat.Completions.New: %v", err)
		}
		return c
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(callContext(t), params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return &acc.ChatCompletion
}

// TestGeminiWithTheResponsesSDK: the same tool loop from a Responses
// client (Codex CLI's protocol): the signature comes sealed in the
// encrypted_content of the reasoning item before the calls, which the
// client sends back as input with the calls and their outputs.
func TestGeminiWithTheResponsesSDK(t *testing.T) {
	t.Parallel()
	backends := geminiBackends(t)
	for _, g := range backends {
		srv, client := g.srv, openAIClient(g.base)
		tools := []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather",
			map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}, false)}
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", g.name, streamed), func(t *testing.T) {
				input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Is Paris warmer than London?", responses.EasyInputMessageRoleUser)}
				params := responses.ResponseNewParams{Model: "gemini-test", Tools: tools, Store: openai.Bool(false),
					Include:   []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
					Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortLow, Summary: shared.ReasoningSummaryAuto}}
				params.Input.OfInputItemList = input
				first := responsesTurn(t, client, params, streamed)
				var calls []responses.ResponseFunctionToolCall
				for _, it := range first.Output {
					switch it.Type {
					case "reasoning":
						r := it.AsReasoning().ToParam()
						input = append(input, responses.ResponseInputItemUnionParam{OfReasoning: &r})
					case "function_call":
						c := it.AsFunctionCall()
						calls = append(calls, c)
						p := c.ToParam()
						input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCall: &p})
					}
				}
				if len(calls) != 2 || calls[0].CallID != "c1" || calls[0].Arguments != `{"city":"Paris"}` || first.Output[0].Type != "reasoning" ||
					first.Output[0].AsReasoning().EncryptedContent == "" {
					t.Fatalf("first turn: %s", first.RawJSON())
				}
				for i, out := range []string{"21C", "14C"} {
					o := responses.ResponseInputItemParamOfFunctionCallOutput(out)
					o.OfFunctionCallOutput.CallID = openai.String(calls[i].CallID)
					input = append(input, o)
				}
				params.Input.OfInputItemList = input
				second := responsesTurn(t, client, params, streamed)
				if second.OutputText() != "Paris is warmer than London." || second.Usage.InputTokens != 300 ||
					second.Usage.InputTokensDetails.CachedTokens != 200 || second.Status != "completed" {
					t.Fatalf("second turn: %s", second.RawJSON())
				}
				sent := gjson.ParseBytes(srv.Last().Body)
				if sent.Get("contents.1.parts.0.thoughtSignature").Str != geminiSignature || sent.Get("contents.2.parts.1.functionResponse.id").Str != "c2" {
					t.Errorf("Gemini got %s", srv.Last().Body)
				}
			})
		}
	}
}

// responsesTurn makes one Responses request, whole or streamed (the
// response of response.completed).
func responsesTurn(t *testing.T, client openai.Client, params responses.ResponseNewParams, streamed bool) *responses.Response {
	t.Helper()
	if !streamed {
		r, err := client.Responses.New(callContext(t), params)
		if err != nil {
			t.Fatalf("Responses.New: %v", err)
		}
		return r
	}
	got := readResponsesStream(t, client.Responses.NewStreaming(callContext(t), params))
	if got.final == nil {
		t.Fatal("no response.completed")
	}
	return got.final
}
