package translate

import (
	"context"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/meter"
)

// A Responses request whose stored conversation the gateway expanded in
// place of previous_response_id (Target.Continues) gets answers that name
// it, whole or streamed, from every upstream; without it they name none.
func TestResponsesAnswerNamesContinued(t *testing.T) {
	pairs := []struct {
		name     string
		request  func(context.Context, []byte, Target) ([]byte, *Plan, error)
		response func([]byte, *Plan, int64) ([]byte, []byte, meter.Usage, error)
		answer   string
	}{
		{"chat", ResponsesBodyToChat, ChatAnswerToResponses,
			`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`},
		{"messages", ResponsesBodyToMessages, MessagesAnswerToResponses,
			`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`},
		{"gemini", ResponsesBodyToGemini, GeminiAnswerToResponses,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"Done."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2}}`},
	}
	for _, p := range pairs {
		for _, continues := range []string{"", "resp_before"} {
			for _, streamed := range []bool{false, true} {
				body := `{"model":"x","input":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"and then?"}],"stream":` +
					map[bool]string{false: "false", true: "true"}[streamed] + `}`
				_, plan, err := p.request(context.Background(), []byte(body), Target{Model: "m", Continues: continues})
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				out, stream, _, err := p.response([]byte(p.answer), plan, 1)
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				var objects []gjson.Result
				if streamed {
					for _, ev := range events(stream) {
						if r := gjson.GetBytes(ev.Data, "response"); r.IsObject() {
							objects = append(objects, r)
						}
					}
				} else {
					objects = []gjson.Result{gjson.ParseBytes(out)}
				}
				if len(objects) == 0 {
					t.Fatalf("%s stream=%v: no response object in %s%s", p.name, streamed, out, stream)
				}
				for _, r := range objects {
					got := r.Get("previous_response_id")
					if continues == "" && got.Type != gjson.Null || continues != "" && got.Str != continues {
						t.Errorf("%s stream=%v continues=%q: previous_response_id %s in %.300s", p.name, streamed, continues, got.Raw, r.Raw)
					}
				}
			}
		}
	}
}
