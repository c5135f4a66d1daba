package sdk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// anthropicClient returns an Anthropic SDK client for the gateway at base,
// with no environment defaults and no retries. Without a credential in
// opts it authenticates with the master key in x-api-key.
func anthropicClient(base string, opts ...option.RequestOption) anthropic.Client {
	all := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	if len(opts) == 0 {
		opts = []option.RequestOption{option.WithAPIKey(masterKey)}
	}
	return anthropic.NewClient(append(all, opts...)...)
}

func userText(text string) []anthropic.MessageParam {
	return []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}
}

// anthropicError unwraps err into the SDK's API error and checks its status
// and error type.
func anthropicError(t *testing.T, err error, status int, typ string) *anthropic.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want status %d %s", status, typ)
	}
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("got error %T %v, want *anthropic.Error with status %d", err, err, status)
	}
	if apiErr.StatusCode != status {
		t.Errorf("status: got %d, want %d (%v)", apiErr.StatusCode, status, err)
	}
	if typ != "" && string(apiErr.Type()) != typ {
		t.Errorf("error type: got %q, want %q (%v)", apiErr.Type(), typ, err)
	}
	return apiErr
}

func TestAnthropicEchoMessage(t *testing.T) {
	t.Parallel()
	base := startGateway(t, nil, nil)
	const text = "Hello, gateway! <b>&</b> ünïcödé ✓"
	for _, tc := range []struct {
		name string
		cred option.RequestOption
	}{
		{"x-api-key", option.WithAPIKey(masterKey)},
		{"bearer", option.WithAuthToken(masterKey)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := anthropicClient(base, tc.cred)
			msg, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{
				Model: "echo", MaxTokens: 256, Messages: []anthropic.MessageParam{
					anthropic.NewUserMessage(anthropic.NewTextBlock("an earlier question")),
					anthropic.NewAssistantMessage(anthropic.NewTextBlock("an earlier answer")),
					anthropic.NewUserMessage(anthropic.NewTextBlock(text)),
				},
			})
			if err != nil {
				t.Fatalf("Messages.New: %v", err)
			}
			if len(msg.Content) != 1 || msg.Content[0].Type != "text" {
				t.Fatalf("content: got %s, want one text block", msg.RawJSON())
			}
			if got := msg.Content[0].Text; got != text {
				t.Errorf("text: got %q, want %q", got, text)
			}
			if msg.Role != "assistant" {
				t.Errorf("role: got %q, want assistant", msg.Role)
			}
			if msg.Model != "echo" {
				t.Errorf("model: got %q, want echo", msg.Model)
			}
			if msg.StopReason != anthropic.StopReasonEndTurn {
				t.Errorf("stop_reason: got %q, want end_turn", msg.StopReason)
			}
			if msg.Usage.InputTokens <= 0 || msg.Usage.OutputTokens <= 0 {
				t.Errorf("usage: got input %d output %d, want both > 0", msg.Usage.InputTokens, msg.Usage.OutputTokens)
			}
			if !strings.HasPrefix(msg.ID, "msg_") {
				t.Errorf("id: got %q, want a msg_ id", msg.ID)
			}
		})
	}
}

func TestAnthropicEchoStream(t *testing.T) {
	t.Parallel()
	base := startGateway(t, nil, nil)
	client := anthropicClient(base)
	const text = "streamed back <one> word & at a time — ✓"

	stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{
		Model: "echo", MaxTokens: 256, Messages: userText(text),
	})
	defer stream.Close()
	var msg anthropic.Message
	var deltas []string
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate(%s): %v", ev.Type, err)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			deltas = append(deltas, ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != text {
		t.Fatalf("accumulated content: got %s, want one text block %q", msg.RawJSON(), text)
	}
	if words := strings.SplitAfter(text, " "); !slices.Equal(deltas, words) {
		t.Errorf("text deltas: got %q, want word by word %q", deltas, words)
	}
	if msg.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("stop_reason: got %q, want end_turn", msg.StopReason)
	}
	if msg.Usage.InputTokens <= 0 || msg.Usage.OutputTokens <= 0 {
		t.Errorf("final usage: got input %d output %d, want both > 0", msg.Usage.InputTokens, msg.Usage.OutputTokens)
	}
}

func TestAnthropicPassThroughMessage(t *testing.T) {
	t.Parallel()
	transcript := upstreamtest.File("anthropic_message.json")
	for _, model := range []string{"claude-test", "anthropic/claude-test"} {
		t.Run(strings.ReplaceAll(model, "/", "_"), func(t *testing.T) {
			t.Parallel()
			up := staticUpstream(t, upstreamtest.Reply{Body: transcript, Header: http.Header{"Request-Id": {"req_upstream_123"}}})
			base := startGateway(t, up, nil)
			var capture clientCapture
			client := anthropicClient(base, option.WithAPIKey(masterKey), option.WithMiddleware(capture.middleware))

			const beta = "interleaved-thinking-2025-05-14,extended-cache-ttl-2025-04-11"
			// A version other than the one the gateway would add on its own
			// shows that the client's header is forwarded.
			const version = "2023-01-01"
			unknown := map[string]any{"nested": []any{1, "two", true, nil}, "html": "<b>&</b>"}
			var httpResp *http.Response
			msg, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{
				Model: anthropic.Model(model), MaxTokens: 2048, Messages: userText("Hi <there> & hello"),
				System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
				Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
			},
				option.WithHeader("anthropic-beta", beta),
				option.WithHeader("anthropic-version", version),
				option.WithJSONSet("x_unknown_field", unknown),
				option.WithResponseInto(&httpResp),
			)
			if err != nil {
				t.Fatalf("Messages.New: %v", err)
			}

			// What the client got: the upstream's answer, as it was.
			if got, want := strings.TrimSpace(msg.RawJSON()), string(bytes.TrimSpace(transcript)); got != want {
				t.Errorf("response body not relayed as is:\n got: %s\nwant: %s", got, want)
			}
			if len(msg.Content) != 2 {
				t.Fatalf("content: got %d blocks, want 2: %s", len(msg.Content), msg.RawJSON())
			}
			if b := msg.Content[0]; b.Type != "thinking" || b.Thinking != "Simple greeting." || b.Signature != "EqQBCgIYAhIMsig==" {
				t.Errorf("thinking block: got type %q thinking %q signature %q, want thinking %q signature %q",
					b.Type, b.Thinking, b.Signature, "Simple greeting.", "EqQBCgIYAhIMsig==")
			}
			if b := msg.Content[1]; b.Type != "text" || b.Text != "Hi! <b>&</b> How can I help?" {
				t.Errorf("text block: got type %q text %q, want text %q", b.Type, b.Text, "Hi! <b>&</b> How can I help?")
			}
			if u := msg.Usage; u.InputTokens != 12 || u.CacheReadInputTokens != 2048 || u.CacheCreationInputTokens != 0 || u.OutputTokens != 25 {
				t.Errorf("usage: got input %d cache_read %d cache_creation %d output %d, want 12 2048 0 25",
					u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
			}
			if msg.Model != anthropicUpstreamModel {
				t.Errorf("model: got %q, want the upstream's %q", msg.Model, anthropicUpstreamModel)
			}
			if extra, ok := msg.JSON.ExtraFields["x_vendor_extra"]; !ok || extra.Raw() != "42" {
				t.Errorf("x_vendor_extra: got %v (present %v), want 42", extra.Raw(), ok)
			}
			if got := httpResp.Header.Get("Request-Id"); got != "req_upstream_123" {
				t.Errorf("request-id response header: got %q, want the upstream's req_upstream_123", got)
			}

			// What the upstream got.
			clientHeader, clientBody := capture.sent(t)
			rec := onlyRequest(t, up)
			if rec.Method != http.MethodPost || rec.Path != "/v1/messages" {
				t.Errorf("upstream request: got %s %s, want POST /v1/messages", rec.Method, rec.Path)
			}
			if got := rec.Header.Get("X-Api-Key"); got != upstreamKey {
				t.Errorf("upstream x-api-key: got %q, want %q", got, upstreamKey)
			}
			if got := rec.Header.Get("Authorization"); got != "" {
				t.Errorf("upstream authorization: got %q, want none", got)
			}
			assertNoClientKey(t, rec)
			for _, h := range []struct{ name, want string }{
				{"Anthropic-Version", version},
				{"Anthropic-Beta", beta},
				{"User-Agent", clientHeader.Get("User-Agent")},
			} {
				if got := rec.Header.Get(h.name); got != h.want || got == "" {
					t.Errorf("upstream %s: got %q, want the client's %q", h.name, got, h.want)
				}
			}
			assertBodyPassedThrough(t, clientBody, rec.Body, model, anthropicUpstreamModel)
			members := jsonMembers(t, rec.Body)
			assertSameJSON(t, "upstream model", members["model"], []byte(`"`+anthropicUpstreamModel+`"`))
			wantUnknown, _ := json.Marshal(unknown)
			assertSameJSON(t, "upstream x_unknown_field", members["x_unknown_field"], wantUnknown)
			if !bytes.Equal(members["x_unknown_field"], jsonMembers(t, clientBody)["x_unknown_field"]) {
				t.Errorf("x_unknown_field: upstream got %s, client sent %s", members["x_unknown_field"], jsonMembers(t, clientBody)["x_unknown_field"])
			}
		})
	}
}

func TestAnthropicPassThroughStream(t *testing.T) {
	t.Parallel()
	up := staticUpstream(t, upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse")})
	base := startGateway(t, up, nil)
	var capture clientCapture
	client := anthropicClient(base, option.WithAPIKey(masterKey), option.WithMiddleware(capture.middleware))

	stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{
		Model: "claude-test", MaxTokens: 4096, Messages: userText("What is the weather in Paris?"),
		Thinking: anthropic.ThinkingConfigParamOfEnabled(2048),
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: "get_weather",
			InputSchema: anthropic.ToolInputSchemaParam{
				Properties: map[string]any{"location": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}},
				Required:   []string{"location"},
			},
		}}},
	})
	defer stream.Close()
	var msg anthropic.Message
	var types []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate(%s): %v", ev.Type, err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream error: %v", err)
	}

	// The SDK hides ping events; every other event must arrive, in order.
	if want := sseEventNames("anthropic_stream.sse", "ping"); !slices.Equal(types, want) {
		t.Errorf("event sequence:\n got %q\nwant %q", types, want)
	}
	if len(msg.Content) != 3 {
		t.Fatalf("content: got %d blocks, want 3: %s", len(msg.Content), msg.RawJSON())
	}
	const (
		wantThinking  = `The user wants the weather in Paris <& "quoted">.`
		wantSignature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds5+Ypl/ZBRRBLoeMUQ=="
		wantText      = "Let me check — ünïcödé ✓ 🌦"
	)
	if b := msg.Content[0]; b.Type != "thinking" || b.Thinking != wantThinking || b.Signature != wantSignature {
		t.Errorf("thinking block: got type %q thinking %q signature %q, want thinking %q signature %q",
			b.Type, b.Thinking, b.Signature, wantThinking, wantSignature)
	}
	if b := msg.Content[1]; b.Type != "text" || b.Text != wantText {
		t.Errorf("text block: got type %q text %q, want %q", b.Type, b.Text, wantText)
	}
	b := msg.Content[2]
	if b.Type != "tool_use" || b.Name != "get_weather" || b.ID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" {
		t.Errorf("tool_use block: got type %q name %q id %q, want tool_use get_weather toolu_01T1x1fJ34qAmk2tNTrN7Up6", b.Type, b.Name, b.ID)
	}
	assertSameJSON(t, "tool_use input", b.Input, []byte(`{"location": "Paris", "unit": "celsius"}`))
	if msg.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("stop_reason: got %q, want tool_use", msg.StopReason)
	}
	if u := msg.Usage; u.InputTokens != 472 || u.CacheCreationInputTokens != 1200 || u.CacheReadInputTokens != 3000 || u.OutputTokens != 89 {
		t.Errorf("usage: got input %d cache_creation %d cache_read %d output %d, want 472 1200 3000 89",
			u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens, u.OutputTokens)
	}
	if u := msg.Usage.CacheCreation; u.Ephemeral5mInputTokens != 200 || u.Ephemeral1hInputTokens != 1000 {
		t.Errorf("cache_creation breakdown: got 5m %d 1h %d, want 200 1000", u.Ephemeral5mInputTokens, u.Ephemeral1hInputTokens)
	}

	_, clientBody := capture.sent(t)
	rec := onlyRequest(t, up)
	if rec.Path != "/v1/messages" || rec.Header.Get("X-Api-Key") != upstreamKey {
		t.Errorf("upstream request: got path %q x-api-key %q, want /v1/messages %q", rec.Path, rec.Header.Get("X-Api-Key"), upstreamKey)
	}
	assertNoClientKey(t, rec)
	assertBodyPassedThrough(t, clientBody, rec.Body, "claude-test", anthropicUpstreamModel)
	if s := jsonMembers(t, rec.Body)["stream"]; string(s) != "true" {
		t.Errorf("upstream stream member: got %s, want true", s)
	}
}

func TestAnthropicErrors(t *testing.T) {
	t.Parallel()
	const overloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	for _, tc := range []struct {
		name     string
		opts     []option.RequestOption // client credential; default the master key
		model    string
		upstream *upstreamtest.Reply // the anthropic provider's answer; nil: none expected
		status   int
		typ      string
	}{
		{name: "wrong key", opts: []option.RequestOption{option.WithAPIKey("sk-tg-not-the-master-key")}, model: "echo",
			status: http.StatusUnauthorized, typ: "authentication_error"},
		{name: "wrong bearer", opts: []option.RequestOption{option.WithAuthToken("sk-tg-not-the-master-key")}, model: "echo",
			status: http.StatusUnauthorized, typ: "authentication_error"},
		{name: "both keys", opts: []option.RequestOption{option.WithAPIKey(masterKey), option.WithAuthToken(masterKey)}, model: "echo",
			status: http.StatusBadRequest, typ: "invalid_request_error"},
		{name: "unknown model", model: "no-such-model",
			status: http.StatusNotFound, typ: "not_found_error"},
		{name: "wrong key for upstream model", opts: []option.RequestOption{option.WithAPIKey("sk-tg-not-the-master-key")}, model: "claude-test",
			status: http.StatusUnauthorized, typ: "authentication_error"},
		{name: "upstream overloaded", model: "claude-test",
			upstream: &upstreamtest.Reply{Status: 529, Body: []byte(overloaded)},
			status:   529, typ: "overloaded_error"},
		{name: "upstream cut before any byte of body", model: "claude-test",
			upstream: &upstreamtest.Reply{Events: [][]byte{}, Cut: true},
			status:   http.StatusBadGateway, typ: "api_error"},
	} {
		for _, streaming := range []bool{false, true} {
			name := tc.name
			if streaming {
				name += " stream"
			} else if tc.upstream != nil && tc.upstream.Events != nil {
				continue // an event-stream answer to a non-streaming call is not a realistic case
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				up := unusedUpstream(t)
				if tc.upstream != nil {
					up = staticUpstream(t, *tc.upstream)
				}
				base := startGateway(t, up, nil)
				client := anthropicClient(base, tc.opts...)
				params := anthropic.MessageNewParams{Model: anthropic.Model(tc.model), MaxTokens: 64, Messages: userText("hi")}
				var err error
				if streaming {
					stream := client.Messages.NewStreaming(callContext(t), params)
					n := 0
					for stream.Next() {
						n++
					}
					err = stream.Err()
					stream.Close()
					if n != 0 {
						t.Errorf("got %d stream events before the error, want none", n)
					}
				} else {
					var msg *anthropic.Message
					msg, err = client.Messages.New(callContext(t), params)
					if err == nil {
						t.Fatalf("got message %s, want an error", msg.RawJSON())
					}
				}
				apiErr := anthropicError(t, err, tc.status, tc.typ)
				if tc.upstream == nil {
					noRequests(t, up)
					if apiErr.RequestID == "" {
						t.Errorf("request-id: got none on a gateway error, want the gateway's id")
					}
				} else {
					onlyRequest(t, up) // no retry behind the client's back
				}
			})
		}
	}
}

func TestAnthropicStreamErrorFirstEvent(t *testing.T) {
	t.Parallel()
	up := staticUpstream(t, upstreamtest.Reply{Events: [][]byte{
		[]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"),
	}})
	base := startGateway(t, up, nil)
	client := anthropicClient(base)
	stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{
		Model: "claude-test", MaxTokens: 64, Messages: userText("hi"),
	})
	defer stream.Close()
	n := 0
	for stream.Next() {
		n++
	}
	if n != 0 {
		t.Errorf("got %d events, want none before the error", n)
	}
	apiErr := anthropicError(t, stream.Err(), 529, "overloaded_error")
	if !strings.Contains(apiErr.RawJSON(), "Overloaded") {
		t.Errorf("error body: got %s, want the upstream's message", apiErr.RawJSON())
	}
	onlyRequest(t, up)
}

func TestAnthropicStreamCut(t *testing.T) {
	t.Parallel()
	// message_start, ping, thinking start, thinking delta, signature delta; then the connection drops.
	events := upstreamtest.Events("anthropic_stream.sse")[:5]
	up := staticUpstream(t, upstreamtest.Reply{Events: events, Cut: true})
	base := startGateway(t, up, nil)
	client := anthropicClient(base)
	stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{
		Model: "claude-test", MaxTokens: 4096, Messages: userText("What is the weather in Paris?"),
	})
	defer stream.Close()
	var msg anthropic.Message
	var types []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate(%s): %v", ev.Type, err)
		}
	}
	err := stream.Err()
	if err == nil {
		t.Fatalf("stream ended cleanly after %q, want an error for the cut upstream", types)
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) && apiErr.Type() != "api_error" {
		t.Errorf("stream error type: got %q, want api_error (%v)", apiErr.Type(), err)
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta"}
	if !slices.Equal(types, want) {
		t.Errorf("events before the error: got %q, want %q", types, want)
	}
	if slices.Contains(types, "message_stop") {
		t.Errorf("got a message_stop the upstream never sent")
	}
	if len(msg.Content) != 1 {
		t.Fatalf("content before the cut: got %d blocks, want the thinking block", len(msg.Content))
	}
	if got, want := msg.Content[0].Thinking, `The user wants the weather in Paris <& "quoted">.`; got != want {
		t.Errorf("thinking before the cut: got %q, want %q", got, want)
	}
}

func TestAnthropicMessageCut(t *testing.T) {
	t.Parallel()
	body := upstreamtest.File("anthropic_message.json")
	up := staticUpstream(t, upstreamtest.Reply{Body: body[:len(body)/2], Cut: true})
	base := startGateway(t, up, nil)
	client := anthropicClient(base)
	msg, err := client.Messages.New(callContext(t), anthropic.MessageNewParams{
		Model: "claude-test", MaxTokens: 64, Messages: userText("hi"),
	})
	if err == nil {
		t.Fatalf("got message %s from a truncated upstream body, want an error", msg.RawJSON())
	}
	onlyRequest(t, up)
}

func TestAnthropicCountTokens(t *testing.T) {
	t.Parallel()
	up := staticUpstream(t, upstreamtest.Reply{Body: []byte(`{"input_tokens":42}`)})
	base := startGateway(t, up, nil)

	t.Run("echo", func(t *testing.T) {
		t.Parallel()
		client := anthropicClient(base)
		res, err := client.Messages.CountTokens(callContext(t), anthropic.MessageCountTokensParams{
			Model: "echo", Messages: userText("count these words, please"),
		})
		if err != nil {
			t.Fatalf("CountTokens: %v", err)
		}
		if res.InputTokens <= 0 {
			t.Errorf("input_tokens: got %d, want > 0", res.InputTokens)
		}
	})
	t.Run("pass-through", func(t *testing.T) {
		t.Parallel()
		var capture clientCapture
		client := anthropicClient(base, option.WithAPIKey(masterKey), option.WithMiddleware(capture.middleware))
		res, err := client.Messages.CountTokens(callContext(t), anthropic.MessageCountTokensParams{
			Model: "claude-test", Messages: userText("count these words, please"),
			System: anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String("Be brief.")},
		})
		if err != nil {
			t.Fatalf("CountTokens: %v", err)
		}
		if res.InputTokens != 42 {
			t.Errorf("input_tokens: got %d, want the upstream's 42", res.InputTokens)
		}
		_, clientBody := capture.sent(t)
		rec := onlyRequest(t, up)
		if rec.Path != "/v1/messages/count_tokens" {
			t.Errorf("upstream path: got %q, want /v1/messages/count_tokens", rec.Path)
		}
		if got := rec.Header.Get("X-Api-Key"); got != upstreamKey {
			t.Errorf("upstream x-api-key: got %q, want %q", got, upstreamKey)
		}
		assertNoClientKey(t, rec)
		assertBodyPassedThrough(t, clientBody, rec.Body, "claude-test", anthropicUpstreamModel)
	})
}

func TestAnthropicModelsList(t *testing.T) {
	t.Parallel()
	base := startGateway(t, nil, nil)
	client := anthropicClient(base)
	page, err := client.Models.List(callContext(t), anthropic.ModelListParams{})
	if err != nil {
		t.Fatalf("Models.List: %v", err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
		if m.DisplayName == "" || m.CreatedAt.IsZero() {
			t.Errorf("model %q: got display_name %q created_at %v, want both set", m.ID, m.DisplayName, m.CreatedAt)
		}
	}
	if !reflect.DeepEqual(ids, configuredModels) {
		t.Errorf("model ids: got %q, want %q", ids, configuredModels)
	}
	if page.HasMore {
		t.Errorf("has_more: got true, want false")
	}
	if page.FirstID != configuredModels[0] || page.LastID != configuredModels[len(configuredModels)-1] {
		t.Errorf("first_id/last_id: got %q/%q, want %q/%q", page.FirstID, page.LastID, configuredModels[0], configuredModels[len(configuredModels)-1])
	}
}
