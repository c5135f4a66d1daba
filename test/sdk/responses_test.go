package sdk_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const responsesUpstreamModel = "gpt-5-codex-2025-09-15"

// startResponsesGateway runs the gateway with a Responses upstream (model
// codex-test), an Anthropic one (claude-test) and an OpenAI-compatible
// chat one (gpt-test); nil upstreams point nowhere.
func startResponsesGateway(t *testing.T, oair, ant, oai *upstreamtest.Server) string {
	t.Helper()
	return gatewaytest.Start(t, responsesConfig(oair, ant, oai), masterKey)
}

// responsesConfig is startResponsesGateway's configuration.
func responsesConfig(oair, ant, oai *upstreamtest.Server) string {
	url := func(s *upstreamtest.Server, suffix string) string {
		if s == nil {
			return unreachable + suffix
		}
		return s.URL + suffix
	}
	return fmt.Sprintf(`
providers:
  - { name: oair, type: openai-responses, base_url: %q, api_key: %q }
  - { name: ant, type: anthropic, base_url: %q, api_key: %q }
  - { name: oai, type: openai, base_url: %q, api_key: %q }
models:
  - { name: codex-test, targets: [ { provider: oair, model: %s } ] }
  - { name: claude-test, targets: [ { provider: ant, model: %s } ] }
  - { name: gpt-test, targets: [ { provider: oai, model: %s } ] }
`, url(oair, "/v1"), upstreamKey, url(ant, ""), upstreamKey, url(oai, "/v1"), upstreamKey,
		responsesUpstreamModel, anthropicUpstreamModel, openAIUpstreamModel)
}

func responsesParams(model string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: shared.ResponsesModel(model),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Be brief.", responses.EasyInputMessageRoleDeveloper),
			responses.ResponseInputItemParamOfMessage("list the files", responses.EasyInputMessageRoleUser),
		}},
	}
}

// openai-go's Responses client, whole and streamed, on the pass-through
// lane: the SDK decodes every item and the usage, cached tokens included.
func TestResponsesSDKPassThrough(t *testing.T) {
	t.Parallel()
	t.Run("whole", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("responses.json")})
		capture := new(clientCapture)
		client := openAIClient(startResponsesGateway(t, up, nil, nil), option.WithMiddleware(capture.middleware))
		res, err := client.Responses.New(callContext(t), responsesParams("codex-test"))
		if err != nil {
			t.Fatal(err)
		}
		checkCodexAnswer(t, res)
		_, sent := capture.sent(t)
		assertBodyPassedThrough(t, sent, onlyRequest(t, up).Body, "codex-test", responsesUpstreamModel)
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Events: upstreamtest.Events("responses_stream.sse"), Gap: eventGap})
		client := openAIClient(startResponsesGateway(t, up, nil, nil))
		stream := client.Responses.NewStreaming(callContext(t), responsesParams("codex-test"))
		var types []string
		var final *responses.Response
		for stream.Next() {
			ev := stream.Current()
			types = append(types, ev.Type)
			if ev.Type == "response.completed" {
				r := ev.Response
				final = &r
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if want := sseEventNames("responses_stream.sse"); fmt.Sprint(types) != fmt.Sprint(want) {
			t.Errorf("event types: got %v, want %v", types, want)
		}
		if final == nil {
			t.Fatal("no response.completed")
		}
		checkCodexAnswer(t, final)
	})
}

// checkCodexAnswer checks the answer of the responses transcripts: a
// reasoning item, a message and a function call, and their usage.
func checkCodexAnswer(t *testing.T, res *responses.Response) {
	t.Helper()
	if len(res.Output) != 3 || res.Output[0].Type != "reasoning" || res.Output[1].Type != "message" || res.Output[2].Type != "function_call" {
		t.Fatalf("output: %s", res.RawJSON())
	}
	if got := res.OutputText(); got != "Let me look." {
		t.Errorf("output text %q", got)
	}
	fc := res.Output[2].AsFunctionCall()
	if fc.Name != "exec_command" || fc.Arguments != `{"cmd":"ls -la"}` || fc.CallID != "call_Kx7Yq2" {
		t.Errorf("function call: %+v", fc)
	}
	if u := res.Usage; u.InputTokens != 5234 || u.InputTokensDetails.CachedTokens != 4096 || u.OutputTokens != 187 ||
		u.OutputTokensDetails.ReasoningTokens != 128 || u.TotalTokens != 5421 {
		t.Errorf("usage: %s", u.RawJSON())
	}
}

// openai-go's Responses client on an OpenAI-compatible chat upstream: the
// request is translated into a chat completion request and the answer,
// whole or streamed, into a response the SDK decodes.
func TestResponsesSDKOnChatUpstream(t *testing.T) {
	t.Parallel()
	t.Run("whole", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
		client := openAIClient(startResponsesGateway(t, nil, nil, up))
		res, err := client.Responses.New(callContext(t), responsesParams("gpt-test"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != responses.ResponseStatusCompleted || res.Model != openAIUpstreamModel || !strings.HasPrefix(res.ID, "resp_") {
			t.Errorf("response: %s", res.RawJSON())
		}
		if got := res.OutputText(); got != "Hello! <b>&</b> How can I assist you today?" {
			t.Errorf("output text %q", got)
		}
		if u := res.Usage; u.InputTokens != 1919 || u.InputTokensDetails.CachedTokens != 1792 || u.OutputTokens != 10 || u.TotalTokens != 1929 {
			t.Errorf("usage: %s", u.RawJSON())
		}
		sent := onlyRequest(t, up)
		if sent.Path != "/v1/chat/completions" {
			t.Errorf("upstream path %s", sent.Path)
		}
		// The conversation's key goes with it, for OpenAI's prompt cache.
		want := `{"model":"` + openAIUpstreamModel + `","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"list the files"}],"prompt_cache_key":"tollgate-`
		if !strings.HasPrefix(string(sent.Body), want) || len(sent.Body) != len(want)+16+2 {
			t.Errorf("upstream body:\n got %s\nwant %s<16 hex digits>\"}", sent.Body, want)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Events: upstreamtest.Events("openai_stream.sse"), Gap: eventGap})
		client := openAIClient(startResponsesGateway(t, nil, nil, up))
		stream := client.Responses.NewStreaming(callContext(t), responsesParams("gpt-test"))
		got := readResponsesStream(t, stream)
		text, args, final := got.text, got.args, got.final
		if text != "Checking <&> ünïcödé 🌦" || args != `{"location":"Paris"}` {
			t.Errorf("streamed text %q, arguments %q", text, args)
		}
		if final == nil {
			t.Fatal("no response.completed")
		}
		if len(final.Output) != 2 || final.OutputText() != text {
			t.Fatalf("final output: %s", final.RawJSON())
		}
		fc := final.Output[1].AsFunctionCall()
		if fc.Name != "get_weather" || fc.Arguments != `{"location":"Paris"}` || fc.CallID != "call_DdmO9pD3xa9XTPNJ32zg2hcA" {
			t.Errorf("function call: %+v", fc)
		}
		if u := final.Usage; u.InputTokens != 1117 || u.InputTokensDetails.CachedTokens != 1024 || u.OutputTokens != 46 {
			t.Errorf("usage: %s", u.RawJSON())
		}
		if sent := onlyRequest(t, up); !strings.Contains(string(sent.Body), `"stream_options":{"include_usage":true}`) {
			t.Errorf("upstream body asks no usage: %s", sent.Body)
		}
	})
	t.Run("tool round trip", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
		client := openAIClient(startResponsesGateway(t, nil, nil, up))
		params := responsesParams("gpt-test")
		output := responses.ResponseInputItemParamOfFunctionCallOutput("a.txt\nb.txt")
		output.OfFunctionCallOutput.CallID = openai.String("call_1")
		params.Input.OfInputItemList = append(params.Input.OfInputItemList,
			responses.ResponseInputItemParamOfFunctionCall(`{"cmd":"ls"}`, "call_1", "exec_command"), output)
		params.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("exec_command",
			map[string]any{"type": "object", "properties": map[string]any{"cmd": map[string]any{"type": "string"}}}, false)}
		if _, err := client.Responses.New(callContext(t), params); err != nil {
			t.Fatal(err)
		}
		body := string(onlyRequest(t, up).Body)
		for _, want := range []string{
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}}]}`,
			`{"role":"tool","content":"a.txt\nb.txt","tool_call_id":"call_1"}`,
			`"tools":[{"type":"function","function":{"name":"exec_command","parameters":`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("upstream body lacks %s:\n%s", want, body)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		client := openAIClient(startResponsesGateway(t, nil, nil, unusedUpstream(t)))
		params := responsesParams("gpt-test")
		params.PreviousResponseID = openai.String("resp_123")
		_, err := client.Responses.New(callContext(t), params)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "previous_response_id" {
			t.Fatalf("error: %v", err)
		}
	})
}

// openai-go's Responses client on a Claude model: the request becomes a
// Messages request and the answer, whole or streamed, a response with
// Claude's thinking as a reasoning item; sent back, the item gives Claude
// its own block again.
func TestResponsesSDKOnClaude(t *testing.T) {
	t.Parallel()
	t.Run("whole, reasoning round trip", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
		client := openAIClient(startResponsesGateway(t, nil, up, nil))
		params := responsesParams("claude-test")
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		params.Store = openai.Bool(false)
		res, err := client.Responses.New(callContext(t), params)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Output) != 2 || res.Output[0].Type != "reasoning" || res.OutputText() != "Hi! <b>&</b> How can I help?" {
			t.Fatalf("output: %s", res.RawJSON())
		}
		rs := res.Output[0].AsReasoning()
		if len(rs.Summary) != 1 || rs.Summary[0].Text != "Simple greeting." || rs.EncryptedContent == "" {
			t.Errorf("reasoning item: %s", rs.RawJSON())
		}
		if u := res.Usage; u.InputTokens != 2060 || u.InputTokensDetails.CachedTokens != 2048 || u.OutputTokens != 25 || u.TotalTokens != 2085 {
			t.Errorf("usage: %s", u.RawJSON())
		}
		first := onlyRequest(t, up)
		if first.Path != "/v1/messages" || !strings.Contains(string(first.Body), `"system":[{"type":"text","text":"Be brief."}]`) {
			t.Errorf("upstream request %s %s", first.Path, first.Body)
		}
		// The next turn sends the output back as input.
		next := responsesParams("claude-test")
		reasoning := res.Output[0].AsReasoning().ToParam()
		message := res.Output[1].AsMessage().ToParam()
		next.Input.OfInputItemList = append(next.Input.OfInputItemList,
			responses.ResponseInputItemUnionParam{OfReasoning: &reasoning}, responses.ResponseInputItemUnionParam{OfOutputMessage: &message})
		next.Input.OfInputItemList = append(next.Input.OfInputItemList, responses.ResponseInputItemParamOfMessage("thanks", responses.EasyInputMessageRoleUser))
		if _, err := client.Responses.New(callContext(t), next); err != nil {
			t.Fatal(err)
		}
		reqs := up.Requests()
		want := `{"role":"assistant","content":[{"type":"thinking","thinking":"Simple greeting.","signature":"EqQBCgIYAhIMsig=="},{"type":"text","text":"Hi! <b>&</b> How can I help?"}]}`
		if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), want) {
			t.Errorf("second upstream request lacks %s:\n%s", want, reqs[len(reqs)-1].Body)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse"), Gap: eventGap})
		client := openAIClient(startResponsesGateway(t, nil, up, nil))
		stream := client.Responses.NewStreaming(callContext(t), responsesParams("claude-test"))
		got := readResponsesStream(t, stream)
		text, args, summary, final := got.text, got.args, got.summary, got.final
		if text != "Let me check — ünïcödé ✓ 🌦" || args != `{"location": "Paris", "unit": "celsius"}` ||
			summary != `The user wants the weather in Paris <& "quoted">.` {
			t.Errorf("streamed text %q, summary %q, arguments %q", text, summary, args)
		}
		if final == nil {
			t.Fatal("no response.completed")
		}
		if len(final.Output) != 3 || final.Output[2].AsFunctionCall().CallID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" {
			t.Fatalf("final output: %s", final.RawJSON())
		}
		if u := final.Usage; u.InputTokens != 4672 || u.InputTokensDetails.CachedTokens != 3000 || u.OutputTokens != 89 {
			t.Errorf("usage: %s", u.RawJSON())
		}
	})
	t.Run("upstream error", func(t *testing.T) {
		t.Parallel()
		up := staticUpstream(t, upstreamtest.Reply{Status: 529, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)})
		client := openAIClient(startResponsesGateway(t, nil, up, nil))
		_, err := client.Responses.New(callContext(t), responsesParams("claude-test"))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Type != "service_unavailable_error" {
			t.Fatalf("error: %v", err)
		}
	})
}

// streamed is what a Responses stream said: its deltas, and the response
// of response.completed (nil without one).
type streamed struct {
	text, args, summary string
	final               *responses.Response
}

// readResponsesStream reads a stream to its end, checking that sequence
// numbers count from 0.
func readResponsesStream(t *testing.T, stream *ssestream.Stream[responses.ResponseStreamEventUnion]) *streamed {
	t.Helper()
	got := new(streamed)
	var text, args, summary strings.Builder
	seq := int64(0)
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("event %s has sequence number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.reasoning_summary_text.delta":
			summary.WriteString(ev.Delta)
		case "response.function_call_arguments.delta":
			args.WriteString(ev.Delta)
		case "response.completed":
			r := ev.Response
			got.final = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	got.text, got.args, got.summary = text.String(), args.String(), summary.String()
	return got
}
