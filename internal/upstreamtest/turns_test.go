package upstreamtest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestTurnReply: a turn written in each protocol, whole and streamed, is
// valid JSON throughout and carries its text, its thinking where the
// protocol has some, and its calls' arguments.
func TestTurnReply(t *testing.T) {
	turn := Turn{Thinking: "Let me think.", Signature: "c2lnbmF0dXJl", Text: []string{"Hel", "lo"},
		Calls: []Call{{ID: "call_1", Name: "get_weather", Args: `{"city":"Paris"}`}}, Usage: Usage{Input: 10, Cached: 4, Output: 3}}
	for _, tc := range []struct {
		path, query, body string
		thinking          bool
	}{
		{"/v1beta/models/m:generateContent", "", `{}`, true},
		{"/v1beta/models/m:streamGenerateContent", "alt=sse", `{}`, true},
		{"/v1beta/models/m:streamGenerateContent", "", `{}`, true},
		{"/v1/messages", "", `{"stream":false}`, true},
		{"/v1/messages", "", `{"stream":true}`, true},
		{"/v1/chat/completions", "", `{}`, false},
		{"/v1/chat/completions", "", `{"stream":true}`, false},
		{"/v1/responses", "", `{}`, true},
		{"/v1/responses", "", `{"stream":true}`, true},
	} {
		r := Received{Path: tc.path, Query: tc.query, Body: []byte(tc.body)}
		t.Run(Dialect(r)+"?"+tc.query+tc.body, func(t *testing.T) {
			rep := turn.Reply(r)
			var all []byte
			if rep.Events == nil {
				if !gjson.ValidBytes(rep.Body) {
					t.Fatalf("invalid JSON: %s", rep.Body)
				}
				all = rep.Body
			}
			for _, ev := range rep.Events {
				data, ok := bytes.CutPrefix(ev[bytes.Index(ev, []byte("data: ")):], []byte("data: "))
				if !ok || !bytes.HasSuffix(bytes.ReplaceAll(ev, []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
					t.Fatalf("not an SSE event: %q", ev)
				}
				if d := bytes.TrimSpace(data); string(d) != "[DONE]" && !gjson.ValidBytes(d) {
					t.Fatalf("event data is not JSON: %s", d)
				}
				all = append(all, data...)
			}
			text := string(all)
			if Streamed(r) != (rep.Events != nil || strings.HasPrefix(text, "[")) {
				t.Errorf("streamed %v, reply %.40s", Streamed(r), text)
			}
			// Streamed text and arguments come in pieces: look for each.
			for _, want := range []string{"Hel", "lo", "get_weather", "Paris"} {
				if !strings.Contains(text, want) {
					t.Errorf("reply lacks %q: %s", want, text)
				}
			}
			if got := strings.Contains(text, "Let me think.") && strings.Contains(text, "c2lnbmF0dXJl"); got != tc.thinking {
				t.Errorf("thinking and signature present: %v, want %v", got, tc.thinking)
			}
		})
	}
}

// TestErrorReply: each protocol's error has its own envelope.
func TestErrorReply(t *testing.T) {
	for path, want := range map[string]string{
		"/v1beta/models/m:generateContent": "error.status",
		"/v1/messages":                     "error.type",
		"/v1/chat/completions":             "error.code",
	} {
		rep := ErrorReply(Received{Path: path}, 429, "slow down")
		if rep.Status != 429 || gjson.GetBytes(rep.Body, want).Str == "" || !bytes.Contains(rep.Body, []byte("slow down")) {
			t.Errorf("%s: %d %s", path, rep.Status, rep.Body)
		}
	}
}
