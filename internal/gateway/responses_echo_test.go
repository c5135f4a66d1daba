package gateway_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/sse"
	"github.com/tollgate/tollgate/internal/store/storetest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// geminiAnswer is a whole Gemini answer, and the data of a one-event
// stream.
const geminiAnswer = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Done."}]},"finishReason":"STOP","index":0}],` +
	`"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":2,"totalTokenCount":14},"modelVersion":"gemini-x"}`

// lifecycleResponses are the response objects of the lifecycle events of
// a Responses stream, in order.
func lifecycleResponses(stream []byte) []gjson.Result {
	var out []gjson.Result
	var f sse.Fields
	for len(stream) > 0 {
		n := sse.Split(stream)
		if n == 0 {
			break
		}
		f.Parse(stream[:n])
		stream = stream[n:]
		if r := gjson.GetBytes(f.Data, "response"); r.IsObject() {
			out = append(out, r)
		}
	}
	return out
}

// An answer to a request that continues a stored response names it
// (previous_response_id) on every lane: the translated ones (Messages,
// Chat Completions and Gemini upstreams), and the pass-through lane, whose
// upstream got the conversation in place of the id, or cut the stream
// (the gateway's own response.failed names it too). The stored answer
// names it as well.
func TestResponsesEchoPreviousID(t *testing.T) {
	responsesEvents := upstreamtest.Events("responses_stream.sse")
	for _, tc := range []struct {
		name, typ string
		whole     []byte
		events    [][]byte
		cut       bool
	}{
		{"messages", "anthropic", upstreamtest.File("anthropic_message.json"), upstreamtest.Events("anthropic_stream.sse"), false},
		{"chat", "openai", upstreamtest.File("openai_completion.json"), upstreamtest.Events("openai_stream.sse"), false},
		{"gemini", "gemini", []byte(geminiAnswer), [][]byte{[]byte("data: " + geminiAnswer + "\r\n\r\n")}, false},
		{"responses", "openai-responses", upstreamtest.File("responses.json"), responsesEvents, false},
		{"responses-cut", "openai-responses", upstreamtest.File("responses.json"), responsesEvents[:12], true},
	} {
		for name, db := range storetest.Open(t) {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				first := storingUpstream(t)
				var stream bool
				up := upstreamtest.New(func(upstreamtest.Received) upstreamtest.Reply {
					if stream {
						return upstreamtest.Reply{Events: tc.events, Cut: tc.cut}
					}
					return upstreamtest.Reply{Body: tc.whole}
				})
				t.Cleanup(up.Close)
				base := up.URL
				if tc.typ == "openai" || tc.typ == "openai-responses" {
					base += "/v1"
				}
				e := newEnvStore(t, `
providers:
  - { name: first, type: openai-responses, base_url: "`+first.URL+`/v1", api_key: "`+upstreamKey+`" }
  - { name: lane, type: `+tc.typ+`, base_url: "`+base+`", api_key: "`+upstreamKey+`" }
models:
  - { name: first, targets: [ { provider: first, model: gpt-5 } ] }
  - { name: lane, targets: [ { provider: lane, model: lane-model } ] }
`, db)
				started := e.call("POST", "/v1/responses", `{"model":"first","input":"list files"}`, masterKey)
				prev := gjson.Get(started.body, "id").Str
				if started.status != 200 || prev == "" {
					t.Fatalf("the first turn: %d %s", started.status, started.body)
				}
				for _, stream = range []bool{false, true} {
					body := fmt.Sprintf(`{"model":"lane","previous_response_id":%q,"input":"and then?","stream":%v}`, prev, stream)
					got := e.call("POST", "/v1/responses", body, masterKey)
					if sent := up.Last().Body; bytes.Contains(sent, []byte(prev)) || !bytes.Contains(sent, []byte("list files")) {
						t.Fatalf("stream=%v: the upstream did not get the conversation in place of the id: %s", stream, sent)
					}
					if got.status != 200 {
						t.Fatalf("stream=%v: %d %s", stream, got.status, got.body)
					}
					objects := []gjson.Result{gjson.Parse(got.body)}
					if stream {
						objects = lifecycleResponses([]byte(got.body))
						if len(objects) < 2 {
							t.Fatalf("stream: %d lifecycle events in %.400s", len(objects), got.body)
						}
					}
					for i, r := range objects {
						if r.Get("previous_response_id").Str != prev {
							t.Errorf("stream=%v: response object %d does not name %s: %.300s", stream, i, prev, r.Raw)
						}
					}
					last := objects[len(objects)-1]
					if tc.cut && stream && last.Get("status").Str != "failed" {
						t.Errorf("the cut stream ends with %.300s", last.Raw)
					}
					kept := e.call("GET", "/v1/responses/"+last.Get("id").Str, "", masterKey)
					if kept.status != 200 || gjson.Get(kept.body, "previous_response_id").Str != prev {
						t.Errorf("stream=%v: the stored answer: %d %.300s", stream, kept.status, kept.body)
					}
				}
			})
		}
	}
}

// A pass-through answer whose upstream names the response it continues
// (the target stored it) is relayed byte for byte.
func TestResponsesEchoUpstreamNamesIt(t *testing.T) {
	var sent []byte // the upstream's last answer
	up := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		body := upstreamtest.File("responses.json")
		if id := gjson.GetBytes(r.Body, "previous_response_id").Str; id != "" {
			body = bytes.ReplaceAll(body, []byte(gjson.GetBytes(body, "id").Str), []byte("resp_second"))
			body = bytes.Replace(body, []byte(`"previous_response_id": null`), []byte(`"previous_response_id": "`+id+`"`), 1)
		}
		sent = body
		return upstreamtest.Reply{Body: body}
	})
	t.Cleanup(up.Close)
	for name, db := range storetest.Open(t) {
		e := newEnvStore(t, `
providers:
  - { name: oair, type: openai-responses, base_url: "`+up.URL+`/v1", api_key: "`+upstreamKey+`" }
models:
  - { name: codex, targets: [ { provider: oair, model: gpt-5-codex } ] }
`, db)
		first := e.call("POST", "/v1/responses", `{"model":"codex","input":"list files"}`, masterKey)
		prev := gjson.Get(first.body, "id").Str
		if first.status != 200 || prev == "" {
			t.Fatalf("%s: the first turn: %d %s", name, first.status, first.body)
		}
		got := e.call("POST", "/v1/responses", `{"model":"codex","previous_response_id":"`+prev+`","input":"go on"}`, masterKey)
		if gjson.GetBytes(up.Last().Body, "previous_response_id").Str != prev || got.status != 200 || got.body != string(sent) ||
			gjson.Get(got.body, "previous_response_id").Str != prev {
			t.Errorf("%s: continuing on the target that stored it: %d %.400s", name, got.status, got.body)
		}
	}
}
