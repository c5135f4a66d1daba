package translate

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
	"github.com/tollgate/tollgate/internal/sse/ssetest"
)

var update = flag.Bool("update", false, "rewrite the want sections of golden files")

// A golden case is a txtar file in testdata named <pair>_*.txtar, the pair
// being x2y for a client of protocol x on an upstream of protocol y, one
// letter per protocol (m Messages, c Chat, r Responses, g Gemini): m2c_*
// is a Messages client on a Chat Completions upstream. Its sections:
//
//	caps.json          optional Caps (Go field names)
//	request.json       the client's request
//	want_upstream.json the translated request, or
//	want_error         the expected RequestError message
//	want_headers       optional: tollgate-dropped-params / -adjusted-params lines
//	upstream.json      optional: the upstream's answer → want_response.json
//	upstream.sse       optional: the upstream's stream → want.sse
//
// Random ids in outputs are replaced by stable placeholders before
// comparing.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runGolden(t, file)
		})
	}
}

var (
	randomMsgID  = regexp.MustCompile(`"msg_[0-9A-Za-z]{24}"`)
	randomToolID = regexp.MustCompile(`"toolu_[0-9a-f]{24}"`)
	randomItemID = regexp.MustCompile(`"(resp|rs|msg|fc|ctc|ws)_[0-9a-f]{48}"`)
	randomCallID = regexp.MustCompile(`"call_[0-9a-f]{24}"`)
)

// normalize replaces random ids by stable placeholders; within one output
// the same id gets the same placeholder, so the events of one item can be
// told from another's.
func normalize(b []byte) []byte {
	b = randomMsgID.ReplaceAll(b, []byte(`"msg_RANDOM"`))
	b = randomToolID.ReplaceAll(b, []byte(`"toolu_RANDOM"`))
	seen := map[string]string{}
	number := func(m []byte) []byte {
		id := string(m)
		if r, ok := seen[id]; ok {
			return []byte(r)
		}
		prefix, _, _ := strings.Cut(id, "_")
		r := prefix + "_" + strconv.Itoa(len(seen)+1) + `"`
		seen[id] = r
		return []byte(r)
	}
	b = randomItemID.ReplaceAllFunc(b, number)
	return randomCallID.ReplaceAllFunc(b, number)
}

func section(a *txtar.Archive, name string) ([]byte, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

func setSection(a *txtar.Archive, name string, data []byte) {
	for i, f := range a.Files {
		if f.Name == name {
			a.Files[i].Data = data
			return
		}
	}
	a.Files = append(a.Files, txtar.File{Name: name, Data: data})
}

// checkSection compares got with the section name of a golden file, or
// with -update writes it there (and sets changed).
func checkSection(t *testing.T, a *txtar.Archive, name string, got []byte, changed *bool) {
	t.Helper()
	want, ok := section(a, name)
	if *update {
		if !ok || !bytes.Equal(want, got) {
			setSection(a, name, got)
			*changed = true
		}
		return
	}
	if !ok {
		t.Errorf("missing section %s; got:\n%s", name, got)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

// checkHeaders checks the want_headers section: the parameters the plan
// dropped and adjusted, when it has any or the section is there.
func checkHeaders(t *testing.T, a *txtar.Archive, plan *Plan, changed *bool) {
	t.Helper()
	if _, ok := section(a, "want_headers"); !ok && len(plan.dropped)+len(plan.adjusted) == 0 {
		return
	}
	var h bytes.Buffer
	if len(plan.dropped) > 0 {
		h.WriteString("tollgate-dropped-params: " + strings.Join(plan.dropped, ",") + "\n")
	}
	if len(plan.adjusted) > 0 {
		h.WriteString("tollgate-adjusted-params: " + strings.Join(plan.adjusted, ",") + "\n")
	}
	checkSection(t, a, "want_headers", h.Bytes(), changed)
}

// pretty re-indents JSON for readable golden files and stable diffs.
func pretty(t *testing.T, b []byte) []byte {
	t.Helper()
	v := jsontext.Value(bytes.Clone(b))
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return append(v, '\n')
}

var goldenSigner = NewSigner([]byte("golden-test-key"))

const goldenCreated = 1700000000

func runGolden(t *testing.T, file string) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _, _ := strings.Cut(filepath.Base(file), "_")
	pair, ok := goldenPairs[prefix]
	if !ok {
		t.Fatalf("unknown pair prefix %q", prefix)
	}
	var caps Caps
	if c, ok := section(a, "caps.json"); ok {
		if err := jsonx.Unmarshal(c, &caps); err != nil {
			t.Fatalf("caps.json: %v", err)
		}
	}
	reqBody, ok := section(a, "request.json")
	if !ok {
		t.Fatal("no request.json")
	}
	upstreamReq, plan, err := pair.request(t, reqBody, caps)
	changed := false
	check := func(name string, got []byte) {
		t.Helper()
		checkSection(t, a, name, got, &changed)
	}
	if err != nil {
		check("want_error", []byte(err.Error()+"\n"))
	} else {
		b, merr := jsonx.Marshal(upstreamReq)
		if merr != nil {
			t.Fatal(merr)
		}
		check("want_upstream.json", normalize(pretty(t, b)))
		checkHeaders(t, a, plan, &changed)
	}
	if up, ok := section(a, "upstream.json"); ok && plan != nil {
		check("want_response.json", normalize(pretty(t, pair.response(t, up, plan))))
	}
	if up, ok := section(a, "upstream.sse"); ok && plan != nil {
		got := translateStream(t, pair, up, plan, len(up))
		check("want.sse", normalize(got))
		pair.grammar(t, got, plan)
		// The same output wherever the network splits the upstream bytes.
		for n := 1; n < len(up) && !*update; n = nextPieceSize(n) {
			if split := translateStream(t, pair, up, plan, n); !bytes.Equal(normalize(split), normalize(got)) {
				t.Fatalf("output differs when the upstream arrives in pieces of %d bytes:\n%s", n, split)
			}
		}
	}
	if changed {
		if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// nextPieceSize is the size of the pieces the upstream bytes are split into
// after pieces of n: every size, or with -short a spread of them (1, 2, 4,
// 7, 11, 17, 26, …); go test without -short tries every size.
func nextPieceSize(n int) int {
	if testing.Short() {
		return n + 1 + n/2
	}
	return n + 1
}

// goldenPair is how the golden harness drives one translator pair, by
// the golden file's prefix.
type goldenPair struct {
	request  func(t *testing.T, body []byte, caps Caps) (any, *Plan, error)
	response func(t *testing.T, up []byte, p *Plan) []byte
	stream   func(p *Plan) stream
	grammar  func(t *testing.T, got []byte, p *Plan)
}

// decodeRequest decodes a golden request and translates it with f.
func decodeRequest[In, Out any](f func(*In, string, Caps, Policy, *Signer) (Out, *Plan, error)) func(*testing.T, []byte, Caps) (any, *Plan, error) {
	return func(t *testing.T, body []byte, caps Caps) (any, *Plan, error) {
		t.Helper()
		in := new(In)
		if err := jsonx.Unmarshal(body, in); err != nil {
			t.Fatalf("request.json: %v", err)
		}
		return f(in, "upstream-model", caps, PolicyDefault, goldenSigner)
	}
}

// decodeAnswer decodes a golden upstream answer and translates it with f.
func decodeAnswer[In, Out any](f func(*In, *Plan) (Out, error)) func(*testing.T, []byte, *Plan) []byte {
	return func(t *testing.T, up []byte, p *Plan) []byte {
		t.Helper()
		in := new(In)
		if err := jsonx.Unmarshal(up, in); err != nil {
			t.Fatalf("upstream.json: %v", err)
		}
		out, err := f(in, p)
		if err != nil {
			return []byte(`{"translation_error":` + string(jsonx.AppendQuote(nil, err.Error())) + `}`)
		}
		b, _ := jsonx.Marshal(out)
		return b
	}
}

// bytesAnswer adapts a byte-level answer translator (a pair's Response).
func bytesAnswer(f func([]byte, *Plan, int64) ([]byte, []byte, meter.Usage, error)) func(*testing.T, []byte, *Plan) []byte {
	return func(t *testing.T, up []byte, p *Plan) []byte {
		whole := *p
		whole.Stream = false
		out, _, _, err := f(up, &whole, goldenCreated)
		if err != nil {
			return []byte(`{"translation_error":` + string(jsonx.AppendQuote(nil, err.Error())) + `}`)
		}
		return out
	}
}

var goldenPairs = map[string]goldenPair{
	"m2c": { // Messages client, Chat upstream
		request: decodeRequest(MessagesToChat),
		response: decodeAnswer(func(c *openai.Completion, p *Plan) (*anthropic.Response, error) {
			r, _, err := ChatResponseToMessages(c, p)
			return r, err
		}),
		stream:  func(p *Plan) stream { return NewChatToMessagesStream(p) },
		grammar: func(t *testing.T, got []byte, _ *Plan) { checkAnthropicGrammar(t, got) },
	},
	"c2m": { // Chat client, Messages upstream
		request: decodeRequest(ChatToMessages),
		response: decodeAnswer(func(r *anthropic.Response, p *Plan) (*openai.Completion, error) {
			c, _ := MessagesResponseToChat(r, p, goldenCreated)
			return c, nil
		}),
		stream:  func(p *Plan) stream { return NewMessagesToChatStream(p, goldenCreated) },
		grammar: func(t *testing.T, got []byte, p *Plan) { checkOpenAIGrammar(t, got, p.IncludeUsage) },
	},
	"r2c": { // Responses client, Chat upstream
		request: decodeRequest(ResponsesToChat),
		response: decodeAnswer(func(c *openai.Completion, p *Plan) (*responses.Response, error) {
			r, _, err := ChatResponseToResponses(c, p, goldenCreated)
			return r, err
		}),
		stream:  func(p *Plan) stream { return NewChatToResponsesStream(p, goldenCreated) },
		grammar: func(t *testing.T, got []byte, _ *Plan) { checkResponsesGrammar(t, got) },
	},
	"c2r": { // Chat client, Responses upstream
		request:  decodeRequest(ChatRequestToResponses),
		response: bytesAnswer(ResponsesAnswerToChat),
		stream:   func(p *Plan) stream { return NewResponsesToChatStream(p, goldenCreated) },
		grammar:  func(t *testing.T, got []byte, p *Plan) { checkOpenAIGrammar(t, got, p.IncludeUsage) },
	},
	"m2r": { // Messages client, Responses upstream
		request:  decodeRequest(MessagesRequestToResponses),
		response: bytesAnswer(ResponsesAnswerToMessages),
		stream:   func(p *Plan) stream { return NewResponsesToMessagesStream(p) },
		grammar:  func(t *testing.T, got []byte, _ *Plan) { checkAnthropicGrammar(t, got) },
	},
	"m2g": { // Messages client, Gemini upstream
		request: decodeRequest(withContext(context.Background(), MessagesToGemini)),
		response: decodeAnswer(func(r *gemini.Response, p *Plan) (*anthropic.Response, error) {
			m, _, err := GeminiToMessages(r, p)
			return m, err
		}),
		stream:  func(p *Plan) stream { return NewGeminiToMessagesStream(p) },
		grammar: func(t *testing.T, got []byte, _ *Plan) { checkAnthropicGrammar(t, got) },
	},
	"c2g": { // Chat client, Gemini upstream
		request:  decodeRequest(withContext(context.Background(), ChatToGemini)),
		response: bytesAnswer(GeminiAnswerToChat),
		stream:   func(p *Plan) stream { return NewGeminiToChatStream(p, goldenCreated) },
		grammar:  func(t *testing.T, got []byte, p *Plan) { checkOpenAIGrammar(t, got, p.IncludeUsage) },
	},
	"r2g": { // Responses client, Gemini upstream
		request:  decodeRequest(withContext(context.Background(), ResponsesToGemini)),
		response: bytesAnswer(GeminiAnswerToResponses),
		stream:   func(p *Plan) stream { return NewGeminiToResponsesStream(p, goldenCreated) },
		grammar:  func(t *testing.T, got []byte, _ *Plan) { checkResponsesGrammar(t, got) },
	},
	"r2m": { // Responses client, Messages upstream
		request: decodeRequest(ResponsesToMessages),
		response: decodeAnswer(func(r *anthropic.Response, p *Plan) (*responses.Response, error) {
			out, _ := MessagesResponseToResponses(r, p, goldenCreated)
			return out, nil
		}),
		stream:  func(p *Plan) stream { return NewMessagesToResponsesStream(p, goldenCreated) },
		grammar: func(t *testing.T, got []byte, _ *Plan) { checkResponsesGrammar(t, got) },
	},
}

// stream is what the gateway drives: feed events, then close.
type stream interface {
	Feed(ev []byte) []byte
	Close(eof bool, msg string) ([]byte, bool)
	StartError(ev []byte) (int, []byte, bool)
}

// translateStream feeds the upstream bytes in pieces of n bytes, splitting
// events as the gateway does, and returns the client bytes. A final
// "-- upstream.sse --" without a trailing blank line ends in a cut.
func translateStream(t *testing.T, pair goldenPair, up []byte, plan *Plan, n int) []byte {
	t.Helper()
	return feedStream(t, pair, up, plan, func() int { return n }, true)
}

// feedStream feeds the upstream bytes in the pieces next gives through
// ssetest.Replay, as the gateway's relay reads them: through one reused
// buffer which, when poisoned, is overwritten past each call, so that
// state a stream machine keeps past Feed or StartError that aliases its
// argument reads garbage and the output differs.
func feedStream(t testing.TB, pair goldenPair, up []byte, plan *Plan, next func() int, poisoned bool) []byte {
	t.Helper()
	p := *plan
	s := pair.stream(&p)
	var out []byte
	first, failed := true, false
	ssetest.Replay(up, next, poisoned, func(ev []byte) bool {
		if first {
			var f sse.Fields
			f.Parse(ev)
			if f.Data != nil {
				first = false
				if status, body, isErr := s.StartError(ev); isErr {
					out, failed = []byte("HTTP "+strconv.Itoa(status)+"\n"+string(body)+"\n"), true
					return false
				}
			}
		}
		out = append(out, s.Feed(ev)...)
		return true
	})
	if failed {
		return out
	}
	tail, _ := s.Close(true, "upstream stream ended before its final event")
	return append(out, tail...)
}
