package sdk_test

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const responsesUpstreamModel = "gpt-5-codex-2025-09-15"

// startResponsesGateway runs the gateway with a Responses upstream (model
// codex-test), an Anthropic one (claude-test) and an OpenAI-compatible
// chat one (gpt-test); nil upstreams point nowhere.
func startResponsesGateway(t *testing.T, oair, ant, oai *upstreamtest.Server) string {
	t.Helper()
	url := func(s *upstreamtest.Server, suffix string) string {
		if s == nil {
			return unreachable + suffix
		}
		return s.URL + suffix
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
providers:
  - { name: oair, type: openai-responses, base_url: %q, api_key: %q }
  - { name: ant, type: anthropic, base_url: %q, api_key: %q }
  - { name: oai, type: openai, base_url: %q, api_key: %q }
models:
  - { name: codex-test, targets: [ { provider: oair, model: %s } ] }
  - { name: claude-test, targets: [ { provider: ant, model: %s } ] }
  - { name: gpt-test, targets: [ { provider: oai, model: %s } ] }
`, url(oair, "/v1"), upstreamKey, url(ant, ""), upstreamKey, url(oai, "/v1"), upstreamKey,
		responsesUpstreamModel, anthropicUpstreamModel, openAIUpstreamModel)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	logs := new(syncBuffer)
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(built.Handler)
	t.Cleanup(func() {
		srv.Close()
		built.Close()
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	return srv.URL
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
