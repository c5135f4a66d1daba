package sdk_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// TestGeminiParallelCallsInChunksWithTheResponsesSDK: Gemini streams two
// parallel calls in separate chunks, 10 ms apart, as real streams arrive;
// openai-go's streaming Responses client gets both calls named and
// argued as Gemini sent them, in every event that carries them and in the
// completed response: what the stream keeps of one chunk is not the
// bytes the next read writes over its buffer.
func TestGeminiParallelCallsInChunksWithTheResponsesSDK(t *testing.T) {
	t.Parallel()
	chunks := [][]byte{
		[]byte(`data: {"candidates":[{"content":{"parts":[{"text":"Two questions: two calls.","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":40}}` + "\r\n\r\n"),
		[]byte(`data: {"candidates":[{"content":{"parts":[{"functionCall":{"id":"c1","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"` + geminiSignature + `"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":40}}` + "\r\n\r\n"),
		[]byte(`data: {"candidates":[{"content":{"parts":[{"functionCall":{"id":"c2","name":"lookup_population_of_city","args":{"city":"London","year":2026}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":20,"totalTokenCount":60}}` + "\r\n\r\n"),
	}
	reply := func(authorized func(http.Header) bool) func(upstreamtest.Received) upstreamtest.Reply {
		return func(r upstreamtest.Received) upstreamtest.Reply {
			if !authorized(r.Header) || !strings.HasSuffix(r.Path, ":streamGenerateContent") {
				return upstreamtest.Reply{Status: 403, Body: []byte(`{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`)}
			}
			return upstreamtest.Reply{Events: chunks, Gap: 10 * time.Millisecond}
		}
	}
	api := newUpstream(t, reply(func(h http.Header) bool { return h.Get("X-Goog-Api-Key") == "gemini-secret-key" }))
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	t.Cleanup(tokens.Close)
	vertex := newUpstream(t, reply(func(h http.Header) bool { return tokens.Valid(h.Get("Authorization")) }))
	file := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(file, tokens.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	backends := map[string]string{
		"gemini":        gatewaytest.Start(t, fmt.Sprintf(geminiConfig, api.URL), masterKey),
		"vertex-gemini": gatewaytest.Start(t, fmt.Sprintf(vertexGeminiConfig, file, vertex.URL), masterKey),
	}
	want := []struct{ id, name, args string }{
		{"c1", "get_weather", `{"city":"Paris"}`},
		{"c2", "lookup_population_of_city", `{"city":"London","year":2026}`},
	}
	for name, base := range backends {
		t.Run(name, func(t *testing.T) {
			client := openAIClient(base)
			params := responses.ResponseNewParams{Model: "gemini-test", Store: openai.Bool(false), Tools: []responses.ToolUnionParam{
				responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false),
				responses.ToolParamOfFunction("lookup_population_of_city", map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "year": map[string]any{"type": "integer"}}}, false),
			}}
			params.Input.OfString = openai.String("Weather in Paris, and how many live in London?")
			stream := client.Responses.NewStreaming(callContext(t), params)
			var added, argsDone, itemDone []responses.ResponseFunctionToolCall
			var completed *responses.Response
			for stream.Next() {
				ev := stream.Current()
				switch ev.Type {
				case "response.output_item.added":
					if ev.Item.Type == "function_call" {
						added = append(added, ev.Item.AsFunctionCall())
					}
				case "response.function_call_arguments.done":
					// The SDK's type leaves out the name the event carries.
					argsDone = append(argsDone, responses.ResponseFunctionToolCall{Name: gjson.Get(ev.RawJSON(), "name").Str, Arguments: ev.Arguments})
				case "response.output_item.done":
					if ev.Item.Type == "function_call" {
						itemDone = append(itemDone, ev.Item.AsFunctionCall())
					}
				case "response.completed":
					r := ev.Response
					completed = &r
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if completed == nil {
				t.Fatal("no response.completed")
			}
			var final []responses.ResponseFunctionToolCall
			for _, it := range completed.Output {
				if it.Type == "function_call" {
					final = append(final, it.AsFunctionCall())
				}
			}
			for what, calls := range map[string][]responses.ResponseFunctionToolCall{"output_item.added": added, "function_call_arguments.done": argsDone,
				"output_item.done": itemDone, "response.completed": final} {
				if len(calls) != len(want) {
					t.Fatalf("%s: %d calls, want %d", what, len(calls), len(want))
				}
				for i, c := range calls {
					if c.Name != want[i].name || what != "output_item.added" && c.Arguments != want[i].args ||
						what != "function_call_arguments.done" && c.CallID != want[i].id {
						t.Errorf("%s: call %d is %q %q (id %q), want %q %q (id %q)", what, i, c.Name, c.Arguments, c.CallID, want[i].name, want[i].args, want[i].id)
					}
				}
			}
		})
	}
}
