package translate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// geminiRequestPairs are the request translators of Gemini clients, by
// the prefix of their golden files.
var geminiRequestPairs = map[string]func(context.Context, []byte, Target) ([]byte, *Plan, error){
	"g2m": GeminiBodyToMessages,
	"g2c": GeminiBodyToChat,
	"g2r": GeminiBodyToResponses,
}

// TestGeminiRequestGolden runs the golden files of Gemini clients'
// requests: testdata/gemini_requests/<pair>_*.txtar, with sections
//
//	caps.json          optional Caps (Go field names)
//	target.json        optional {"Stream": true, "Policy": 1}
//	request.json       the client's request
//	want_upstream.json the translated request, or
//	want_error         the expected RequestError's message
//	want_headers       the dropped and adjusted parameters, when any
func TestGeminiRequestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/gemini_requests/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runGeminiRequestGolden(t, file)
		})
	}
}

func runGeminiRequestGolden(t *testing.T, file string) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _, _ := strings.Cut(filepath.Base(file), "_")
	translate, ok := geminiRequestPairs[prefix]
	if !ok {
		t.Fatalf("unknown pair prefix %q", prefix)
	}
	target := Target{Model: "upstream-model", Signer: goldenSigner}
	if c, ok := section(a, "caps.json"); ok {
		if err := jsonx.Unmarshal(c, &target.Caps); err != nil {
			t.Fatalf("caps.json: %v", err)
		}
	}
	if c, ok := section(a, "target.json"); ok {
		var opts struct {
			Stream bool
			Policy Policy
		}
		if err := jsonx.Unmarshal(c, &opts); err != nil {
			t.Fatalf("target.json: %v", err)
		}
		target.Stream, target.Policy = opts.Stream, opts.Policy
	}
	body, ok := section(a, "request.json")
	if !ok {
		t.Fatal("no request.json")
	}
	got, plan, err := translate(t.Context(), body, target)
	changed := false
	if err != nil {
		re, ok := err.(*RequestError)
		if !ok {
			t.Fatalf("error %T: %v", err, err)
		}
		if !strings.HasPrefix(re.Message, re.Param) {
			t.Errorf("the message %q does not start with the param %q", re.Message, re.Param)
		}
		checkSection(t, a, "want_error", []byte(re.Message+"\n"), &changed)
	} else {
		checkSection(t, a, "want_upstream.json", pretty(t, got), &changed)
		checkHeaders(t, a, plan, &changed)
	}
	if changed {
		if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fuzzGeminiRequests fuzzes a Gemini client's request translator: any
// body translates, under each policy and with and without a stream, or
// is refused with a RequestError; what it produces is JSON that check
// accepts.
func fuzzGeminiRequests(f *testing.F, prefix string, caps Caps, check func(t *testing.T, out []byte)) {
	files, _ := filepath.Glob("testdata/gemini_requests/" + prefix + "_*.txtar")
	for _, file := range files {
		a, _ := txtar.ParseFile(file)
		if r, ok := section(a, "request.json"); ok {
			f.Add(r)
		}
	}
	translate := geminiRequestPairs[prefix]
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, policy := range []Policy{PolicyDefault, PolicyLenient} {
			out, _, err := translate(context.Background(), body, Target{Model: "u", Caps: caps, Policy: policy, Signer: goldenSigner, Stream: policy == PolicyLenient})
			if err != nil {
				if _, ok := err.(*RequestError); !ok {
					t.Fatalf("non-request error %T: %v", err, err)
				}
				continue
			}
			if !jsontext.Value(out).IsValid() {
				t.Fatalf("translated request is not JSON: %s", out)
			}
			if check != nil {
				check(t, out)
			}
		}
	})
}

// FuzzGeminiBodyToMessages: every tool_result answers a tool_use of the
// assistant message just before it.
func FuzzGeminiBodyToMessages(f *testing.F) {
	fuzzGeminiRequests(f, "g2m", Caps{WebSearch: true}, func(t *testing.T, out []byte) {
		var req anthropic.MessagesRequest
		if err := jsonx.Unmarshal(out, &req); err != nil {
			t.Fatal(err)
		}
		var calls []string
		for i, m := range req.Messages {
			var uses []string
			for _, b := range m.Content.Blocks {
				switch b.Type {
				case "tool_use":
					uses = append(uses, b.ID)
				case "tool_result":
					if !slices.Contains(calls, b.ToolUseID) {
						t.Fatalf("messages[%d]: tool_result %q answers no call of the message before", i, b.ToolUseID)
					}
				}
			}
			calls = uses
		}
	})
}

// FuzzGeminiBodyToChat: every tool message answers a tool call of the
// assistant message before it, and no assistant message is empty.
func FuzzGeminiBodyToChat(f *testing.F) {
	fuzzGeminiRequests(f, "g2c", Caps{Reasoning: ReasoningDeepSeek, FileParts: true}, func(t *testing.T, out []byte) {
		var req openai.ChatRequest
		if err := jsonx.Unmarshal(out, &req); err != nil {
			t.Fatal(err)
		}
		var calls []string
		for i, m := range req.Messages {
			switch m.Role {
			case "assistant":
				calls = calls[:0]
				for _, tc := range m.ToolCalls {
					calls = append(calls, tc.ID)
				}
				if m.Content.Null && len(m.ToolCalls) == 0 && m.ReasoningContent == "" {
					t.Fatalf("messages[%d]: an empty assistant message", i)
				}
			case "tool":
				if !slices.Contains(calls, m.ToolCallID) {
					t.Fatalf("messages[%d]: tool message %q answers no call of the assistant message before", i, m.ToolCallID)
				}
			default:
				calls = calls[:0]
			}
		}
	})
}

// FuzzGeminiBodyToResponses: every function_call_output answers a
// function_call before it.
func FuzzGeminiBodyToResponses(f *testing.F) {
	fuzzGeminiRequests(f, "g2r", Caps{WebSearch: true}, func(t *testing.T, out []byte) {
		var req responses.Request
		if err := jsonx.Unmarshal(out, &req); err != nil {
			t.Fatal(err)
		}
		var calls []string
		for i, it := range req.Input.Items {
			switch it.Type {
			case "function_call":
				calls = append(calls, it.CallID)
			case "function_call_output":
				if !slices.Contains(calls, it.CallID) {
					t.Fatalf("input[%d]: output %q answers no call before it", i, it.CallID)
				}
			}
		}
	})
}

// Calls without ids get the same ids on every turn of a conversation
// (the upstream's prompt cache holds the prefix), and responses without
// ids, or with ids of the client's own making, pair with the calls by
// order and name.
func TestGeminiCallIDs(t *testing.T) {
	turn1 := `{"role":"user","parts":[{"text":"go"}]},
		{"role":"model","parts":[{"functionCall":{"name":"a","args":{"n":1}}},{"functionCall":{"name":"b"}},{"functionCall":{"name":"a","args":{"n":2}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"b","response":{"output":"B"}}},{"functionResponse":{"id":"a-17-0.1","name":"a","response":{"output":"A1"}}},{"functionResponse":{"name":"a","response":{"output":"A2"}}}]}`
	turn2 := turn1 + `,{"role":"model","parts":[{"text":"and"},{"functionCall":{"id":"x","name":"a"}}]},
		{"role":"user","parts":[{"functionResponse":{"id":"x","name":"a","response":{"result":"A3"}}}]}`
	ids := func(contents string) []string {
		t.Helper()
		out, _, err := GeminiBodyToResponses(t.Context(), []byte(`{"contents":[`+contents+`]}`), Target{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		var req responses.Request
		if err := jsonx.Unmarshal(out, &req); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range req.Input.Items {
			switch it.Type {
			case "function_call":
				got = append(got, it.Name+"="+it.CallID)
			case "function_call_output":
				got = append(got, it.Output.Text+"→"+it.CallID)
			}
		}
		return got
	}
	first := ids(turn1)
	want := []string{"a=call_1_0", "b=call_1_1", "a=call_1_2", "B→call_1_1", "A1→call_1_0", "A2→call_1_2"}
	if !slices.Equal(first, want) {
		t.Fatalf("got  %q\nwant %q", first, want)
	}
	second := ids(turn2)
	if !slices.Equal(second[:len(first)], first) || !slices.Equal(second[len(first):], []string{"a=x", "A3→x"}) {
		t.Errorf("next turn: got %q", second)
	}
}

// Thought parts are never sent as text; a signature sealed with another
// key, or Google's own, is ignored; includeThoughts is what the answer
// side reads.
func TestGeminiThoughts(t *testing.T) {
	other := NewSigner([]byte("another-key"))
	blocks := `[{"type":"thinking","thinking":"mine","signature":"sig"}]`
	body := `{"contents":[{"role":"user","parts":[{"text":"q"}]},
		{"role":"model","parts":[{"text":"secret thought","thought":true},{"text":"answer","thoughtSignature":"` + other.sealSignature([]byte(`{"blocks":`+blocks+`}`)) + `"}]},
		{"role":"user","parts":[{"text":"more"}]}],
		"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}}}`
	out, p, err := GeminiBodyToMessages(t.Context(), []byte(body), Target{Model: "m", Signer: goldenSigner})
	if err != nil {
		t.Fatal(err)
	}
	if !p.geminiThoughts {
		t.Error("includeThoughts was not kept in the plan")
	}
	if strings.Contains(string(out), "secret thought") || strings.Contains(string(out), `"mine"`) {
		t.Errorf("thought text or a foreign signature's blocks were sent: %s", out)
	}
	if !strings.Contains(string(out), `"thinking":{"type":"enabled","budget_tokens":2048}`) {
		t.Errorf("thinking budget not sent: %s", out)
	}
	// The same seal made with the gateway's key restores the blocks.
	body = strings.Replace(body, other.sealSignature([]byte(`{"blocks":`+blocks+`}`)), goldenSigner.sealSignature([]byte(`{"blocks":`+blocks+`}`)), 1)
	out, _, err = GeminiBodyToMessages(t.Context(), []byte(body), Target{Model: "m", Signer: goldenSigner})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `{"type":"thinking","thinking":"mine","signature":"sig"},{"type":"text","text":"answer"}`) {
		t.Errorf("sealed blocks not restored before the part: %s", out)
	}
}

func BenchmarkGeminiBodyToMessages(b *testing.B) {
	a, err := txtar.ParseFile("testdata/gemini_requests/g2m_gemini_cli_round_trip_ids.txtar")
	if err != nil {
		b.Fatal(err)
	}
	body, _ := section(a, "request.json")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := GeminiBodyToMessages(context.Background(), body, Target{Model: "m", Signer: goldenSigner, Stream: true}); err != nil {
			b.Fatal(err)
		}
	}
}
