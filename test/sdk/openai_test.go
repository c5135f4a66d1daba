package sdk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// openAIClient returns an OpenAI SDK client for the gateway at base with
// the master key and no retries; opts come last and may override the key.
func openAIClient(base string, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{
		option.WithBaseURL(base + "/v1"),
		option.WithAPIKey(masterKey),
		option.WithMaxRetries(0),
	}, opts...)...)
}

func chatParams(model, text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model: shared.ChatModel(model),
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("Be brief."),
			openai.UserMessage("an earlier question"),
			openai.AssistantMessage("an earlier answer"),
			openai.UserMessage(text),
		},
	}
}

// openAIError unwraps err into the SDK's API error and checks its status.
func openAIError(t *testing.T, err error, status int) *openai.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want status %d", status)
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("got error %T %v, want *openai.Error with status %d", err, err, status)
	}
	if apiErr.StatusCode != status {
		t.Errorf("status: got %d, want %d (%v)", apiErr.StatusCode, status, err)
	}
	return apiErr
}

func fmtUsage(u openai.CompletionUsage) string {
	return fmt.Sprintf("prompt %d (cached %d) completion %d total %d", u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens, u.TotalTokens)
}

func usageIsZero(u openai.CompletionUsage) bool {
	return u.PromptTokens == 0 && u.CompletionTokens == 0 && u.TotalTokens == 0 && u.PromptTokensDetails.CachedTokens == 0
}

// streamResult is what a client saw of a Chat Completions stream.
type streamResult struct {
	acc        openai.ChatCompletionAccumulator
	chunks     int
	usageOnly  int                      // chunks with no choices
	withUsage  []openai.CompletionUsage // non-zero usage objects seen
	err        error
	rejected   int // chunks the accumulator refused
	finishedTC []openai.FinishedChatCompletionToolCall
	chunkList  []openai.ChatCompletionChunk // every chunk, in order (RawJSON keeps the wire form)
}

func readChatStream(t *testing.T, client openai.Client, params openai.ChatCompletionNewParams, opts ...option.RequestOption) *streamResult {
	t.Helper()
	stream := client.Chat.Completions.NewStreaming(callContext(t), params, opts...)
	defer stream.Close()
	r := new(streamResult)
	for stream.Next() {
		chunk := stream.Current()
		r.chunks++
		r.chunkList = append(r.chunkList, chunk)
		if !r.acc.AddChunk(chunk) {
			r.rejected++
		}
		if tc, ok := r.acc.JustFinishedToolCall(); ok {
			r.finishedTC = append(r.finishedTC, tc)
		}
		if len(chunk.Choices) == 0 {
			r.usageOnly++
		}
		if !usageIsZero(chunk.Usage) {
			r.withUsage = append(r.withUsage, chunk.Usage)
		}
	}
	r.err = stream.Err()
	return r
}

func TestOpenAIEchoCompletion(t *testing.T) {
	t.Parallel()
	base := startGateway(t, nil, nil)
	client := openAIClient(base)
	const text = "Hello, gateway! <b>&</b> ünïcödé ✓"
	res, err := client.Chat.Completions.New(callContext(t), chatParams("echo", text))
	if err != nil {
		t.Fatalf("Chat.Completions.New: %v", err)
	}
	if len(res.Choices) != 1 {
		t.Fatalf("choices: got %d, want 1: %s", len(res.Choices), res.RawJSON())
	}
	c := res.Choices[0]
	if c.Message.Content != text {
		t.Errorf("content: got %q, want %q", c.Message.Content, text)
	}
	if c.Message.Role != "assistant" || c.FinishReason != "stop" {
		t.Errorf("role/finish_reason: got %q/%q, want assistant/stop", c.Message.Role, c.FinishReason)
	}
	if res.Model != "echo" {
		t.Errorf("model: got %q, want echo", res.Model)
	}
	u := res.Usage
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage: got prompt %d completion %d total %d, want non-zero and total = prompt + completion", u.PromptTokens, u.CompletionTokens, u.TotalTokens)
	}
}

func TestOpenAIEchoStream(t *testing.T) {
	t.Parallel()
	base := startGateway(t, nil, nil)
	const text = "streamed back <one> word & at a time — ✓"
	for _, tc := range []struct {
		name         string
		includeUsage bool
	}{
		{"without include_usage", false},
		{"with include_usage", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := openAIClient(base)
			params := chatParams("echo", text)
			if tc.includeUsage {
				params.StreamOptions.IncludeUsage = openai.Bool(true)
			}
			r := readChatStream(t, client, params)
			if r.err != nil {
				t.Fatalf("stream error: %v", r.err)
			}
			if r.rejected != 0 {
				t.Errorf("accumulator rejected %d chunks", r.rejected)
			}
			if len(r.acc.Choices) != 1 {
				t.Fatalf("accumulated choices: got %d, want 1", len(r.acc.Choices))
			}
			if got := r.acc.Choices[0].Message.Content; got != text {
				t.Errorf("accumulated content: got %q, want %q", got, text)
			}
			if got := r.acc.Choices[0].FinishReason; got != "stop" {
				t.Errorf("finish_reason: got %q, want stop", got)
			}
			if words := len(strings.SplitAfter(text, " ")); r.chunks-r.usageOnly < words {
				t.Errorf("content chunks: got %d, want at least one per word (%d)", r.chunks-r.usageOnly, words)
			}
			if !tc.includeUsage {
				if len(r.withUsage) != 0 || r.usageOnly != 0 {
					t.Errorf("got %d chunks with usage (%d without choices), want none: the client did not ask for usage", len(r.withUsage), r.usageOnly)
				}
				if !usageIsZero(r.acc.Usage) {
					t.Errorf("accumulated usage: got %s, want zero", fmtUsage(r.acc.Usage))
				}
				return
			}
			if len(r.withUsage) != 1 || r.usageOnly != 1 {
				t.Fatalf("got %d chunks with usage (%d without choices), want exactly 1", len(r.withUsage), r.usageOnly)
			}
			u := r.acc.Usage
			if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("accumulated usage: got prompt %d completion %d total %d, want non-zero and total = prompt + completion", u.PromptTokens, u.CompletionTokens, u.TotalTokens)
			}
		})
	}
}

func TestOpenAIPassThroughCompletion(t *testing.T) {
	t.Parallel()
	transcript := upstreamtest.File("openai_completion.json")
	up := staticUpstream(t, upstreamtest.Reply{Body: transcript, Header: http.Header{"X-Request-Id": {"req_upstream_456"}}})
	base := startGateway(t, nil, up)
	var capture clientCapture
	client := openAIClient(base, option.WithMiddleware(capture.middleware))
	unknown := map[string]any{"nested": []any{1, "two", true, nil}, "html": "<b>&</b>"}
	params := chatParams("gpt-test", "Hi <there> & hello")
	params.Temperature = openai.Float(0.2)
	var httpResp *http.Response
	res, err := client.Chat.Completions.New(callContext(t), params,
		option.WithJSONSet("x_unknown_field", unknown),
		option.WithResponseInto(&httpResp),
	)
	if err != nil {
		t.Fatalf("Chat.Completions.New: %v", err)
	}

	if got, want := strings.TrimSpace(res.RawJSON()), string(bytes.TrimSpace(transcript)); got != want {
		t.Errorf("response body not relayed as is:\n got: %s\nwant: %s", got, want)
	}
	if len(res.Choices) != 1 {
		t.Fatalf("choices: got %d, want 1", len(res.Choices))
	}
	if got, want := res.Choices[0].Message.Content, "Hello! <b>&</b> How can I assist you today?"; got != want {
		t.Errorf("content: got %q, want %q", got, want)
	}
	if u := res.Usage; u.PromptTokens != 1919 || u.PromptTokensDetails.CachedTokens != 1792 || u.CompletionTokens != 10 || u.TotalTokens != 1929 {
		t.Errorf("usage: got prompt %d cached %d completion %d total %d, want 1919 1792 10 1929",
			u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens, u.TotalTokens)
	}
	if res.Model != openAIUpstreamModel {
		t.Errorf("model: got %q, want the upstream's %q", res.Model, openAIUpstreamModel)
	}
	if extra, ok := res.JSON.ExtraFields["x_provider_extra"]; !ok || extra.Raw() != `{"cost":0.0012}` {
		t.Errorf("x_provider_extra: got %s (present %v), want {\"cost\":0.0012}", extra.Raw(), ok)
	}
	if got := httpResp.Header.Get("X-Request-Id"); got != "req_upstream_456" {
		t.Errorf("x-request-id response header: got %q, want the upstream's req_upstream_456", got)
	}

	clientHeader, clientBody := capture.sent(t)
	rec := onlyRequest(t, up)
	if rec.Method != http.MethodPost || rec.Path != "/v1/chat/completions" {
		t.Errorf("upstream request: got %s %s, want POST /v1/chat/completions", rec.Method, rec.Path)
	}
	if got := rec.Header.Get("Authorization"); got != "Bearer "+upstreamKey {
		t.Errorf("upstream authorization: got %q, want %q", got, "Bearer "+upstreamKey)
	}
	if got := rec.Header.Get("X-Api-Key"); got != "" {
		t.Errorf("upstream x-api-key: got %q, want none", got)
	}
	if got, want := rec.Header.Get("User-Agent"), clientHeader.Get("User-Agent"); got != want || got == "" {
		t.Errorf("upstream user-agent: got %q, want the client's %q", got, want)
	}
	assertNoClientKey(t, rec)
	assertBodyPassedThrough(t, clientBody, rec.Body, "gpt-test", openAIUpstreamModel)
	members := jsonMembers(t, rec.Body)
	assertSameJSON(t, "upstream model", members["model"], []byte(`"`+openAIUpstreamModel+`"`))
	wantUnknown, _ := json.Marshal(unknown)
	assertSameJSON(t, "upstream x_unknown_field", members["x_unknown_field"], wantUnknown)
	if _, ok := members["stream_options"]; ok {
		t.Errorf("upstream body of a non-streaming call has stream_options: %s", rec.Body)
	}
}

func TestOpenAIPassThroughStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		includeUsage bool
	}{
		{"without include_usage", false},
		{"with include_usage", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := staticUpstream(t, upstreamtest.Reply{Events: upstreamtest.Events("openai_stream.sse")})
			base := startGateway(t, nil, up)
			var capture clientCapture
			client := openAIClient(base, option.WithMiddleware(capture.middleware))
			params := chatParams("gpt-test", "What is the weather in Paris?")
			params.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name:       "get_weather",
				Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}}},
			})}
			if tc.includeUsage {
				params.StreamOptions.IncludeUsage = openai.Bool(true)
			}
			r := readChatStream(t, client, params)
			if r.err != nil {
				t.Fatalf("stream error: %v", r.err)
			}
			if r.rejected != 0 {
				t.Errorf("accumulator rejected %d chunks", r.rejected)
			}
			if len(r.acc.Choices) != 1 {
				t.Fatalf("accumulated choices: got %d, want 1", len(r.acc.Choices))
			}
			c := r.acc.Choices[0]
			if got, want := c.Message.Content, "Checking <&> ünïcödé 🌦"; got != want {
				t.Errorf("content: got %q, want %q", got, want)
			}
			if c.FinishReason != "tool_calls" {
				t.Errorf("finish_reason: got %q, want tool_calls", c.FinishReason)
			}
			if len(c.Message.ToolCalls) != 1 {
				t.Fatalf("tool calls: got %d, want 1", len(c.Message.ToolCalls))
			}
			call := c.Message.ToolCalls[0]
			if call.ID != "call_DdmO9pD3xa9XTPNJ32zg2hcA" || call.Function.Name != "get_weather" || call.Function.Arguments != `{"location":"Paris"}` {
				t.Errorf("tool call: got id %q name %q arguments %q, want call_DdmO9pD3xa9XTPNJ32zg2hcA get_weather %q",
					call.ID, call.Function.Name, call.Function.Arguments, `{"location":"Paris"}`)
			}
			if len(r.finishedTC) != 1 || r.finishedTC[0].Name != "get_weather" || r.finishedTC[0].Arguments != `{"location":"Paris"}` {
				var got []string
				for _, tc := range r.finishedTC {
					got = append(got, tc.Name+tc.Arguments)
				}
				t.Errorf("finished tool calls: got %q, want one get_weather call with %s", got, `{"location":"Paris"}`)
			}

			_, clientBody := capture.sent(t)
			rec := onlyRequest(t, up)
			if rec.Path != "/v1/chat/completions" || rec.Header.Get("Authorization") != "Bearer "+upstreamKey {
				t.Errorf("upstream request: got path %q authorization %q, want /v1/chat/completions %q",
					rec.Path, rec.Header.Get("Authorization"), "Bearer "+upstreamKey)
			}
			assertNoClientKey(t, rec)
			var upOpts struct {
				StreamOptions struct {
					IncludeUsage *bool `json:"include_usage"`
				} `json:"stream_options"`
			}
			if err := json.Unmarshal(rec.Body, &upOpts); err != nil {
				t.Fatalf("upstream body: %v", err)
			}
			if p := upOpts.StreamOptions.IncludeUsage; p == nil || !*p {
				t.Errorf("upstream stream_options.include_usage: got %v, want true: %s", p, rec.Body)
			}

			// The transcript has six chunks, the last one usage only.
			if tc.includeUsage {
				assertBodyPassedThrough(t, clientBody, rec.Body, "gpt-test", openAIUpstreamModel)
				if r.chunks != 6 || r.usageOnly != 1 || len(r.withUsage) != 1 {
					t.Errorf("chunks: got %d (%d usage-only, %d with usage), want 6 (1, 1)", r.chunks, r.usageOnly, len(r.withUsage))
				}
				if u := r.acc.Usage; u.PromptTokens != 1117 || u.CompletionTokens != 46 || u.TotalTokens != 1163 || u.PromptTokensDetails.CachedTokens != 1024 {
					t.Errorf("usage: got prompt %d completion %d total %d cached %d, want 1117 46 1163 1024",
						u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.PromptTokensDetails.CachedTokens)
				}
				return
			}
			if _, ok := jsonMembers(t, clientBody)["stream_options"]; ok {
				t.Fatalf("the client sent stream_options; this case needs a request without it: %s", clientBody)
			}
			// Beyond model and stream_options the upstream got the client's bytes.
			got, want := jsonMembers(t, rec.Body), jsonMembers(t, clientBody)
			for _, m := range []map[string]json.RawMessage{got, want} {
				delete(m, "model")
				delete(m, "stream_options")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("upstream body members beyond model and stream_options differ:\n got %s\nwant %s", rec.Body, clientBody)
			}
			if r.chunks != 5 || r.usageOnly != 0 || len(r.withUsage) != 0 {
				t.Errorf("chunks: got %d (%d usage-only, %d with usage), want 5 (0, 0): the usage the gateway asked for must not reach the client",
					r.chunks, r.usageOnly, len(r.withUsage))
			}
			if !usageIsZero(r.acc.Usage) {
				t.Errorf("accumulated usage: got %s, want zero", fmtUsage(r.acc.Usage))
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	t.Parallel()
	const rateLimited = `{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	for _, tc := range []struct {
		name     string
		key      string // default the master key
		model    string
		upstream *upstreamtest.Reply // the openai provider's answer; nil: none expected
		status   int
		typ      string
		code     string
		header   http.Header // response headers the client must see
	}{
		{name: "wrong key", key: "sk-tg-not-the-master-key", model: "echo",
			status: http.StatusUnauthorized, typ: "invalid_request_error", code: "invalid_api_key"},
		{name: "unknown model", model: "no-such-model",
			status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found"},
		{name: "upstream rate limited", model: "gpt-test",
			upstream: &upstreamtest.Reply{Status: http.StatusTooManyRequests, Body: []byte(rateLimited),
				Header: http.Header{"Retry-After": {"7"}, "X-Ratelimit-Remaining-Requests": {"0"}}},
			status: http.StatusTooManyRequests, typ: "requests", code: "rate_limit_exceeded",
			header: http.Header{"Retry-After": {"7"}, "X-Ratelimit-Remaining-Requests": {"0"}}},
		{name: "upstream rejects the gateway's key", model: "gpt-test",
			upstream: &upstreamtest.Reply{Status: http.StatusUnauthorized,
				Body: []byte(`{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)},
			status: http.StatusBadGateway, code: "upstream_auth_failed"},
	} {
		for _, streaming := range []bool{false, true} {
			name := tc.name
			if streaming {
				name += " stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				up := unusedUpstream(t)
				if tc.upstream != nil {
					up = staticUpstream(t, *tc.upstream)
				}
				base := startGateway(t, unusedUpstream(t), up)
				var opts []option.RequestOption
				if tc.key != "" {
					opts = append(opts, option.WithAPIKey(tc.key))
				}
				client := openAIClient(base, opts...)
				params := chatParams(tc.model, "hi")
				var err error
				if streaming {
					r := readChatStream(t, client, params)
					if r.chunks != 0 {
						t.Errorf("got %d chunks before the error, want none", r.chunks)
					}
					err = r.err
				} else {
					var res *openai.ChatCompletion
					res, err = client.Chat.Completions.New(callContext(t), params)
					if err == nil {
						t.Fatalf("got completion %s, want an error", res.RawJSON())
					}
				}
				apiErr := openAIError(t, err, tc.status)
				if tc.typ != "" && apiErr.Type != tc.typ {
					t.Errorf("error type: got %q, want %q (%v)", apiErr.Type, tc.typ, err)
				}
				if apiErr.Code != tc.code {
					t.Errorf("error code: got %q, want %q (%v)", apiErr.Code, tc.code, err)
				}
				if apiErr.Message == "" {
					t.Errorf("error message: got none, want one")
				}
				for k := range tc.header {
					if got, want := apiErr.Response.Header.Get(k), tc.header.Get(k); got != want {
						t.Errorf("response header %s: got %q, want %q", k, got, want)
					}
				}
				if tc.upstream == nil {
					noRequests(t, up)
				} else {
					onlyRequest(t, up) // no retry behind the client's back
				}
			})
		}
	}
}

func TestOpenAIStreamCut(t *testing.T) {
	t.Parallel()
	// A comment, the role chunk and the content chunk; then the connection drops.
	events := upstreamtest.Events("openai_stream.sse")[:3]
	up := staticUpstream(t, upstreamtest.Reply{Events: events, Cut: true})
	base := startGateway(t, nil, up)
	client := openAIClient(base)
	r := readChatStream(t, client, chatParams("gpt-test", "What is the weather in Paris?"))
	if r.err == nil {
		t.Fatalf("stream ended cleanly after %d chunks, want an error for the cut upstream", r.chunks)
	}
	if r.chunks != 2 {
		t.Errorf("chunks before the error: got %d, want 2", r.chunks)
	}
	if len(r.acc.Choices) != 1 {
		t.Fatalf("accumulated choices: got %d, want 1", len(r.acc.Choices))
	}
	if got, want := r.acc.Choices[0].Message.Content, "Checking <&> ünïcödé 🌦"; got != want {
		t.Errorf("content before the cut: got %q, want %q", got, want)
	}
	if fr := r.acc.Choices[0].FinishReason; fr != "" {
		t.Errorf("finish_reason: got %q from a cut stream, want none", fr)
	}
	onlyRequest(t, up)
}

func TestOpenAICompletionCut(t *testing.T) {
	t.Parallel()
	body := upstreamtest.File("openai_completion.json")
	up := staticUpstream(t, upstreamtest.Reply{Body: body[:len(body)/2], Cut: true})
	base := startGateway(t, nil, up)
	client := openAIClient(base)
	res, err := client.Chat.Completions.New(callContext(t), chatParams("gpt-test", "hi"))
	if err == nil {
		t.Fatalf("got completion %s from a truncated upstream body, want an error", res.RawJSON())
	}
	onlyRequest(t, up)
}

func TestOpenAIModelsList(t *testing.T) {
	t.Parallel()
	base := startGateway(t, nil, nil)
	client := openAIClient(base)
	page, err := client.Models.List(callContext(t))
	if err != nil {
		t.Fatalf("Models.List: %v", err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
		if m.Object != "model" || m.OwnedBy == "" || m.Created == 0 {
			t.Errorf("model %q: got object %q owned_by %q created %d, want model, an owner and a time", m.ID, m.Object, m.OwnedBy, m.Created)
		}
	}
	if !reflect.DeepEqual(ids, configuredModels) {
		t.Errorf("model ids: got %q, want %q", ids, configuredModels)
	}
}
