package sdk_test

import (
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// The official SDKs' Chat Completions and Messages clients on a model
// served only through the Responses API (codex-test): requests become
// Responses requests, answers and streams come back in the client's
// protocol.

func TestChatClientOnResponsesUpstream(t *testing.T) {
	t.Parallel()
	t.Run("whole", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("responses.json")})
		client := openAIClient(startResponsesGateway(t, up, nil, nil))
		c, err := client.Chat.Completions.New(callContext(t), chatParams("codex-test", "list the files"))
		if err != nil {
			t.Fatal(err)
		}
		m := c.Choices[0].Message
		if m.Content != "Let me look." || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "exec_command" ||
			m.ToolCalls[0].Function.Arguments != `{"cmd":"ls -la"}` || c.Choices[0].FinishReason != "tool_calls" {
			t.Errorf("completion: %s", c.RawJSON())
		}
		if u := c.Usage; u.PromptTokens != 5234 || u.PromptTokensDetails.CachedTokens != 4096 || u.CompletionTokens != 187 {
			t.Errorf("usage: %s", u.RawJSON())
		}
		sent := onlyRequest(t, up)
		if sent.Path != "/v1/responses" || !strings.Contains(string(sent.Body), `{"type":"message","role":"system","content":"Be brief."},`) ||
			!strings.Contains(string(sent.Body), `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"an earlier answer"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}]`) ||
			!strings.Contains(string(sent.Body), `"store":false`) || !strings.Contains(string(sent.Body), `"model":"`+responsesUpstreamModel+`"`) {
			t.Errorf("upstream request %s %s", sent.Path, sent.Body)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Events: upstreamtest.Events("responses_stream.sse"), Gap: eventGap})
		client := openAIClient(startResponsesGateway(t, up, nil, nil))
		params := chatParams("codex-test", "list the files")
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		r := readChatStream(t, client, params)
		if r.err != nil || r.rejected > 0 {
			t.Fatalf("stream: %v, %d chunks rejected", r.err, r.rejected)
		}
		acc := r.acc.Choices[0]
		if acc.Message.Content != "Let me look." || len(r.finishedTC) != 1 || r.finishedTC[0].Arguments != `{"cmd":"ls -la"}` || acc.FinishReason != "tool_calls" {
			t.Errorf("accumulated: %+v, tool calls %+v", acc, r.finishedTC)
		}
		if len(r.withUsage) != 1 || r.withUsage[0].PromptTokens != 5234 || r.withUsage[0].CompletionTokens != 187 {
			t.Errorf("usage chunks: %+v", r.withUsage)
		}
	})
}

func TestMessagesClientOnResponsesUpstream(t *testing.T) {
	t.Parallel()
	t.Run("whole, reasoning round trip", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("responses.json")})
		client := anthropicClient(startResponsesGateway(t, up, nil, nil))
		params := anthropic.MessageNewParams{Model: "codex-test", MaxTokens: 1024, Messages: userText("list the files"),
			Thinking: anthropic.ThinkingConfigParamOfEnabled(8000)}
		msg, err := client.Messages.New(callContext(t), params)
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.Content) != 3 || msg.Content[0].Type != "thinking" || msg.Content[1].Text != "Let me look." ||
			msg.Content[2].Name != "exec_command" || msg.StopReason != anthropic.StopReasonToolUse {
			t.Fatalf("message: %s", msg.RawJSON())
		}
		if u := msg.Usage; u.InputTokens != 1138 || u.CacheReadInputTokens != 4096 || u.OutputTokens != 187 {
			t.Errorf("usage: %s", u.RawJSON())
		}
		// The next turn sends the answer back with the tool's result.
		next := params
		next.Messages = append(next.Messages, msg.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock(msg.Content[2].ID, "a.txt", false)))
		if _, err := client.Messages.New(callContext(t), next); err != nil {
			t.Fatal(err)
		}
		reqs := up.Requests()
		if len(reqs) != 2 {
			t.Fatalf("upstream got %d requests", len(reqs))
		}
		body := string(reqs[1].Body)
		for _, want := range []string{
			`"encrypted_content":"gAAAAABoofDDencrypted=="`, `"reasoning":{"effort":"medium","summary":"auto"}`,
			`{"type":"function_call_output","call_id":"call_Kx7Yq2","output":"a.txt"}`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("second upstream request lacks %s:\n%s", want, body)
			}
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Events: upstreamtest.Events("responses_stream.sse"), Gap: eventGap})
		client := anthropicClient(startResponsesGateway(t, up, nil, nil))
		stream := client.Messages.NewStreaming(callContext(t), anthropic.MessageNewParams{Model: "codex-test", MaxTokens: 1024, Messages: userText("list the files")})
		var msg anthropic.Message
		for stream.Next() {
			if err := msg.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if len(msg.Content) != 3 || msg.Content[0].Thinking != "**Listing files**\n\nI will run ls." || msg.Content[0].Signature == "" ||
			msg.Content[1].Text != "Let me look." || string(msg.Content[2].Input) != `{"cmd":"ls -la"}` || msg.StopReason != anthropic.StopReasonToolUse {
			t.Errorf("message: %s", msg.RawJSON())
		}
	})
}
