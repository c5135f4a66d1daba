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
		out, _, err := MessagesToChat(&in, "u", Caps{}, PolicyDefault, goldenSigner)
		if err != nil {
			if _, ok := err.(*RequestError); !ok {
				t.Fatalf("non-request error %T: %v", err, err)
			}
			return
		}
		if _, err := jsonx.Marshal(out); err != nil {
			t.Fatalf("translated request does not encode: %v", err)
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
		out, _, err := ChatToMessages(&in, "u", Caps{}, PolicyDefault, goldenSigner)
		if err != nil {
			if _, ok := err.(*RequestError); !ok {
				t.Fatalf("non-request error %T: %v", err, err)
			}
			return
		}
		if _, err := jsonx.Marshal(out); err != nil {
			t.Fatalf("translated request does not encode: %v", err)
		}
	})
}
