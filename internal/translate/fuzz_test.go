package translate

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
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
	seedStreams(f, "a2o_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, tools bool) {
		p := &Plan{ClientModel: "m", Stream: true, signer: goldenSigner}
		if tools {
			p.toolNames = map[string]string{"f": "long name"}
		}
		out := translateStream(t, true, up, p, int(piece%32)+1)
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
	seedStreams(f, "o2a_")
	f.Fuzz(func(t *testing.T, up []byte, piece uint8, usage bool) {
		p := &Plan{ClientModel: "m", Stream: true, IncludeUsage: usage, signer: goldenSigner}
		out := translateStream(t, false, up, p, int(piece%32)+1)
		if len(out) > 0 && string(out[:5]) != "HTTP " {
			if err := openAIGrammar(out, usage); err != nil {
				t.Fatalf("grammar: %v\nupstream %q\nclient %q", err, up, out)
			}
		}
	})
}

// FuzzMessagesToChat: any decodable Anthropic request translates or is
// refused with a RequestError, and what it produces encodes.
func FuzzMessagesToChat(f *testing.F) {
	files, _ := filepath.Glob("testdata/a2o_*.txtar")
	for _, file := range files {
		a, _ := txtar.ParseFile(file)
		if r, ok := section(a, "request.json"); ok {
			f.Add(r)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in anthropic.MessagesRequest
		if jsonx.Unmarshal(body, &in) != nil {
			return
		}
		// Default capabilities, and those that reshape the conversation.
		for _, caps := range []Caps{{}, {LeadingSystemOnly: true, Reasoning: ReasoningDeepSeek, FileParts: true}} {
			out, _, err := MessagesToChat(&in, "u", caps, PolicyDefault, goldenSigner)
			if err != nil {
				if _, ok := err.(*RequestError); !ok {
					t.Fatalf("non-request error %T: %v", err, err)
				}
				continue
			}
			if _, err := jsonx.Marshal(out); err != nil {
				t.Fatalf("translated request does not encode: %v", err)
			}
		}
	})
}

// FuzzChatToMessages: the same for OpenAI requests.
func FuzzChatToMessages(f *testing.F) {
	files, _ := filepath.Glob("testdata/o2a_*.txtar")
	for _, file := range files {
		a, _ := txtar.ParseFile(file)
		if r, ok := section(a, "request.json"); ok {
			f.Add(r)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in openai.ChatRequest
		if jsonx.Unmarshal(body, &in) != nil {
			return
		}
		for _, caps := range []Caps{{}, {SystemMessages: true, Thinking: ThinkingAdaptive, OutputFormat: true}} {
			out, _, err := ChatToMessages(&in, "u", caps, PolicyDefault, goldenSigner)
			if err != nil {
				if _, ok := err.(*RequestError); !ok {
					t.Fatalf("non-request error %T: %v", err, err)
				}
				continue
			}
			if _, err := jsonx.Marshal(out); err != nil {
				t.Fatalf("translated request does not encode: %v", err)
			}
			if caps.SystemMessages {
				checkSystemPlacement(t, out.Messages)
			}
		}
	})
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
