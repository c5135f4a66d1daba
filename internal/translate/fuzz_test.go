package translate

import (
	"context"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// seedStreams adds every golden upstream stream of one direction.
func seedStreams(f *testing.F, prefix string) {
	files, _ := filepath.Glob("testdata/" + prefix + "*.txtar")
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if up, ok := section(a, "upstream.sse"); ok {
			f.Add(up, uint8(7), true)
		}
	}
}

// FuzzStreamChatToMessages: whatever an OpenAI-compatible upstream sends,
// the Anthropic client's stream obeys the grammar and nothing panics.
func FuzzStreamChatToMessages(f *testing.F) {
	seedStreams(f, "m2c_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, tools bool) {
		p := &Plan{AnswerModel: "m", Stream: true, signer: goldenSigner}
		if tools {
			p.toolNames = map[string]string{"f": "long name"}
		}
		out := translateStream(t, goldenPairs["m2c"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := anthropicGrammar(out); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzStreamMessagesToChat: whatever an Anthropic upstream sends, the
// OpenAI client's stream obeys the grammar and nothing panics.
func FuzzStreamMessagesToChat(f *testing.F) {
	seedStreams(f, "c2m_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, usage bool) {
		p := &Plan{AnswerModel: "m", Stream: true, IncludeUsage: usage, signer: goldenSigner}
		out := translateStream(t, goldenPairs["c2m"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := openAIGrammar(out, usage); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzStreamChatToResponses: whatever an OpenAI-compatible upstream
// sends, the Responses client's stream obeys the grammar and nothing panics.
func FuzzStreamChatToResponses(f *testing.F) {
	seedStreams(f, "r2c_")
	seedStreams(f, "m2c_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, tools bool) {
		p := &Plan{AnswerModel: "m", Stream: true, signer: goldenSigner, rp: &responsesPlan{req: &responses.Request{Model: "m"}}}
		if tools {
			p.rp.tools = map[string]rTool{"f": {name: "apply_patch", custom: true}, "ns__g": {namespace: "ns", name: "g"}}
		}
		out := translateStream(t, goldenPairs["r2c"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := responsesGrammar(out); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzStreamMessagesToResponses: whatever an Anthropic upstream sends,
// the Responses client's stream obeys the grammar and nothing panics.
func FuzzStreamMessagesToResponses(f *testing.F) {
	seedStreams(f, "r2m_")
	seedStreams(f, "c2m_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, tools bool) {
		p := &Plan{AnswerModel: "m", Stream: true, signer: goldenSigner, rp: &responsesPlan{req: &responses.Request{Model: "m"}}}
		if tools {
			p.rp.tools = map[string]rTool{"f": {name: "apply_patch", custom: true}, "ns__g": {namespace: "ns", name: "g"}}
			p.JSONTool = true
		}
		out := translateStream(t, goldenPairs["r2m"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := responsesGrammar(out); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzStreamResponsesToChat: whatever a Responses upstream sends, the
// OpenAI client's stream obeys the grammar and nothing panics.
func FuzzStreamResponsesToChat(f *testing.F) {
	seedStreams(f, "c2r_")
	seedStreams(f, "m2r_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, usage bool) {
		p := &Plan{AnswerModel: "m", Stream: true, IncludeUsage: usage, signer: goldenSigner}
		out := translateStream(t, goldenPairs["c2r"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := openAIGrammar(out, usage); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzStreamResponsesToMessages: whatever a Responses upstream sends, the
// Anthropic client's stream obeys the grammar and nothing panics.
func FuzzStreamResponsesToMessages(f *testing.F) {
	seedStreams(f, "m2r_")
	seedStreams(f, "c2r_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, _ bool) {
		p := &Plan{AnswerModel: "m", Stream: true, signer: goldenSigner}
		out := translateStream(t, goldenPairs["m2r"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := anthropicGrammar(out); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzChatRequestToResponses fuzzes chat requests for Responses upstreams.
func FuzzChatRequestToResponses(f *testing.F) {
	fuzzRequests(f, "c2r_", ChatRequestToResponses, nil, Caps{})
}

// FuzzMessagesRequestToResponses fuzzes Anthropic requests for Responses
// upstreams.
func FuzzMessagesRequestToResponses(f *testing.F) {
	fuzzRequests(f, "m2r_", MessagesRequestToResponses, nil, Caps{})
}

// fuzzRequests fuzzes a request translator: any decodable request,
// seeded from the golden files with prefix, translates under each of caps
// or is refused with a RequestError, and what it produces encodes; check,
// when set, inspects each translation.
func fuzzRequests[In, Out any](f *testing.F, prefix string, translate func(*In, string, Caps, Policy, *Signer) (Out, *Plan, error), check func(*testing.T, Caps, Out), caps ...Caps) {
	files, _ := filepath.Glob("testdata/" + prefix + "*.txtar")
	for _, file := range files {
		a, _ := txtar.ParseFile(file)
		if r, ok := section(a, "request.json"); ok {
			f.Add(r)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in := new(In)
		if jsonx.Unmarshal(body, in) != nil {
			return
		}
		for _, c := range caps {
			out, _, err := translate(in, "u", c, PolicyDefault, goldenSigner)
			if err != nil {
				if _, ok := err.(*RequestError); !ok {
					t.Fatalf("non-request error %T: %v", err, err)
				}
				continue
			}
			if _, err := jsonx.Marshal(out); err != nil {
				t.Fatalf("translated request does not encode: %v", err)
			}
			if check != nil {
				check(t, c, out)
			}
		}
	})
}

// FuzzResponsesToChat fuzzes Responses requests for chat upstreams.
func FuzzResponsesToChat(f *testing.F) {
	fuzzRequests(f, "r2c_", ResponsesToChat, nil, Caps{}, Caps{LeadingSystemOnly: true, Reasoning: ReasoningDeepSeek, LegacyMaxTokens: true})
}

// FuzzResponsesToMessages fuzzes Responses requests for Anthropic
// upstreams, with system messages kept in place or hoisted.
func FuzzResponsesToMessages(f *testing.F) {
	fuzzRequests(f, "r2m_", ResponsesToMessages, func(t *testing.T, c Caps, out *anthropic.MessagesRequest) {
		if c.SystemMessages {
			checkSystemPlacement(t, out.Messages)
		}
	}, Caps{}, Caps{SystemMessages: true, Thinking: ThinkingAdaptive, OutputFormat: true})
}

// FuzzMessagesToChat fuzzes Anthropic requests for chat upstreams, with
// default capabilities and those that reshape the conversation.
func FuzzMessagesToChat(f *testing.F) {
	fuzzRequests(f, "m2c_", MessagesToChat, nil, Caps{}, Caps{LeadingSystemOnly: true, Reasoning: ReasoningDeepSeek, FileParts: true})
}

// FuzzChatToMessages fuzzes OpenAI requests for Anthropic upstreams; with
// system messages kept, their placement follows Anthropic's rules.
func FuzzChatToMessages(f *testing.F) {
	fuzzRequests(f, "c2m_", ChatToMessages, func(t *testing.T, c Caps, out *anthropic.MessagesRequest) {
		if c.SystemMessages {
			checkSystemPlacement(t, out.Messages)
		}
	}, Caps{}, Caps{SystemMessages: true, Thinking: ThinkingAdaptive, OutputFormat: true})
}

// checkSystemPlacement asserts Anthropic's placement rules for system
// messages inside messages: after a user message, before an assistant
// message or last, never first.
func checkSystemPlacement(t *testing.T, msgs []anthropic.Message) {
	t.Helper()
	for i, m := range msgs {
		if m.Role != "system" {
			continue
		}
		if i == 0 || msgs[i-1].Role != "user" || (i+1 < len(msgs) && msgs[i+1].Role != "assistant") {
			roles := make([]string, len(msgs))
			for k := range msgs {
				roles[k] = msgs[k].Role
			}
			t.Fatalf("system message at %d breaks the placement rules: %q", i, roles)
		}
	}
}

// FuzzStreamGeminiToMessages: whatever a Gemini upstream streams, the
// Anthropic client's stream obeys the grammar and nothing panics.
func FuzzStreamGeminiToMessages(f *testing.F) {
	seedStreams(f, "m2g_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, tools bool) {
		p := &Plan{AnswerModel: "m", Stream: true, signer: goldenSigner}
		if tools {
			p.toolNames = map[string]string{"_f_1": "1 f"}
		}
		out := translateStream(t, goldenPairs["m2g"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := anthropicGrammar(out); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzMessagesToGemini fuzzes Anthropic requests for Gemini upstreams:
// every model turn's function calls carry a signature, the client's
// sealed one or the documented skip value.
func FuzzMessagesToGemini(f *testing.F) {
	fuzzRequests(f, "m2g_", withContext(context.Background(), MessagesToGemini), func(t *testing.T, _ Caps, out *gemini.Request) {
		for i, c := range out.Contents {
			signed := false
			for _, p := range c.Parts {
				signed = signed || p.FunctionCall != nil && p.ThoughtSignature != ""
			}
			for _, p := range c.Parts {
				if p.FunctionCall != nil && !signed {
					t.Fatalf("contents[%d]: function calls without a signature", i)
				}
			}
		}
	}, Caps{})
}

// FuzzStreamGeminiToChat: whatever a Gemini upstream streams, the OpenAI
// client's stream obeys the grammar and nothing panics.
func FuzzStreamGeminiToChat(f *testing.F) {
	seedStreams(f, "c2g_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, usage bool) {
		p := &Plan{AnswerModel: "m", Stream: true, IncludeUsage: usage, signer: goldenSigner}
		out := translateStream(t, goldenPairs["c2g"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := openAIGrammar(out, usage); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzChatToGemini fuzzes Chat requests for Gemini upstreams (the same
// signature rule as FuzzMessagesToGemini).
func FuzzChatToGemini(f *testing.F) {
	fuzzRequests(f, "c2g_", withContext(context.Background(), ChatToGemini), func(t *testing.T, _ Caps, out *gemini.Request) { checkSignedTurns(t, out) }, Caps{})
}

// FuzzStreamGeminiToResponses: whatever a Gemini upstream streams, the
// Responses client's stream obeys the grammar and nothing panics.
func FuzzStreamGeminiToResponses(f *testing.F) {
	seedStreams(f, "r2g_")
	seedStreams(f, "m2g_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, tools bool) {
		p := &Plan{AnswerModel: "m", Stream: true, signer: goldenSigner, rp: &responsesPlan{req: &responses.Request{Model: "m"}}}
		if tools {
			p.rp.tools = map[string]rTool{"f": {name: "apply_patch", custom: true}, "ns__g": {namespace: "ns", name: "g"}}
		}
		out := translateStream(t, goldenPairs["r2g"], up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := responsesGrammar(out); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzResponsesToGemini fuzzes Responses requests for Gemini upstreams
// (the same signature rule as FuzzMessagesToGemini).
func FuzzResponsesToGemini(f *testing.F) {
	fuzzRequests(f, "r2g_", withContext(context.Background(), ResponsesToGemini), func(t *testing.T, _ Caps, out *gemini.Request) { checkSignedTurns(t, out) }, Caps{})
}

// checkSignedTurns fails when a model turn's function calls carry no
// thought signature (Gemini 3 refuses such a turn).
func checkSignedTurns(t *testing.T, out *gemini.Request) {
	t.Helper()
	for i, c := range out.Contents {
		signed, calls := false, false
		for _, p := range c.Parts {
			calls = calls || p.FunctionCall != nil
			signed = signed || p.FunctionCall != nil && p.ThoughtSignature != ""
		}
		if calls && !signed {
			t.Fatalf("contents[%d]: function calls without a signature", i)
		}
	}
}
