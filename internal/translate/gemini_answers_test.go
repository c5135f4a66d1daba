package translate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse/ssetest"
)

// The answers Gemini clients get from the other upstreams are golden
// files in testdata/gemini_answers, named g2m_* (Messages upstream),
// g2c_* (Chat) and g2r_* (Responses), with sections:
//
//	plan.json          what the request translation planned (answerPlan)
//	upstream.json      optional: a whole answer → want_response.json
//	upstream.sse       optional: a stream → want.sse (a last event
//	                   without its blank line is a cut stream)
//	want_usage.json    the usage the stream (else the answer) metered

// answerPlan is the part of a Plan the answer side reads.
type answerPlan struct {
	AnswerModel   string
	Stream        bool
	JSONTool      bool
	Thoughts      bool
	InputEstimate int64
	ToolNames     map[string]string
}

func (a answerPlan) plan() *Plan {
	return &Plan{AnswerModel: a.AnswerModel, Stream: a.Stream, JSONTool: a.JSONTool, InputEstimate: a.InputEstimate,
		geminiThoughts: a.Thoughts, toolNames: a.ToolNames, signer: goldenSigner}
}

// geminiPair is how the tests drive one upstream's answers to a Gemini
// client.
type geminiPair struct {
	answer func([]byte, *Plan, int64) ([]byte, []byte, meter.Usage, error)
	stream func(*Plan) stream
}

var geminiPairs = map[string]geminiPair{
	"g2m": {answer: MessagesAnswerToGemini, stream: func(p *Plan) stream { return NewMessagesToGeminiStream(p, goldenCreated) }},
	"g2c": {answer: ChatAnswerToGemini, stream: func(p *Plan) stream { return NewChatToGeminiStream(p, goldenCreated) }},
	"g2r": {answer: ResponsesAnswerToGemini, stream: func(p *Plan) stream { return NewResponsesToGeminiStream(p, goldenCreated) }},
}

var randomResponseID = regexp.MustCompile(`"responseId":"[0-9A-Za-z]{24}"`)

func normalizeGemini(b []byte) []byte {
	return randomResponseID.ReplaceAll(b, []byte(`"responseId":"RANDOM"`))
}

func TestGeminiAnswersGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/gemini_answers/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runGeminiGolden(t, file)
		})
	}
}

func loadGeminiGolden(t testing.TB, file string) (*txtar.Archive, geminiPair, *Plan) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _, _ := strings.Cut(filepath.Base(file), "_")
	pair, ok := geminiPairs[prefix]
	if !ok {
		t.Fatalf("unknown pair prefix %q", prefix)
	}
	var ap answerPlan
	if b, ok := section(a, "plan.json"); ok {
		if err := jsonx.Unmarshal(b, &ap); err != nil {
			t.Fatalf("plan.json: %v", err)
		}
	}
	return a, pair, ap.plan()
}

func runGeminiGolden(t *testing.T, file string) {
	a, pair, plan := loadGeminiGolden(t, file)
	changed := false
	check := func(name string, got []byte) {
		t.Helper()
		want, ok := section(a, name)
		if *update {
			if !ok || !bytes.Equal(want, got) {
				setSection(a, name, got)
				changed = true
			}
			return
		}
		if !ok {
			t.Errorf("missing section %s; got:\n%s", name, got)
		} else if !bytes.Equal(want, got) {
			t.Errorf("%s differs:\n--- got\n%s--- want\n%s", name, got, want)
		}
	}
	var use meter.Usage
	if up, ok := section(a, "upstream.json"); ok {
		whole := *plan
		whole.Stream = false
		out, _, u, err := pair.answer(up, &whole, goldenCreated)
		if err != nil {
			out = []byte(`{"translation_error":` + string(jsonx.AppendQuote(nil, err.Error())) + `}`)
		} else {
			checkGeminiResponse(t, out)
		}
		check("want_response.json", normalizeGemini(pretty(t, out)))
		use = u
		// A stream request answered whole: one event holding the answer.
		whole.Stream = true
		if _, s, _, err := pair.answer(up, &whole, goldenCreated); err == nil && !bytes.Equal(s, []byte("data: "+string(out)+"\r\n\r\n")) {
			t.Errorf("the stream of a whole answer is not one event holding it:\n%s", s)
		}
	}
	if up, ok := section(a, "upstream.sse"); ok {
		got, u := geminiStream(t, pair, up, plan, func() int { return len(up) }, false)
		check("want.sse", normalizeGemini(got))
		checkGeminiGrammar(t, got)
		use = u
		for n := 1; n < len(up) && !*update; n = nextPieceSize(n) {
			split, _ := geminiStream(t, pair, up, plan, ssetest.Pieces(n), true)
			if !bytes.Equal(normalizeGemini(split), normalizeGemini(got)) {
				t.Fatalf("output differs when the upstream arrives in pieces of %d bytes:\n%s", n, split)
			}
		}
	}
	b, _ := jsonx.Marshal(use)
	check("want_usage.json", pretty(t, b))
	if changed {
		if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// geminiStream feeds the upstream bytes through a pair's stream as the
// relay does (feedStream) and returns the client bytes and the usage.
func geminiStream(t testing.TB, pair geminiPair, up []byte, plan *Plan, next func() int, poisoned bool) ([]byte, meter.Usage) {
	t.Helper()
	var s stream
	out := feedStream(t, goldenPair{stream: func(p *Plan) stream { s = pair.stream(p); return s }}, up, plan, next, poisoned)
	return out, s.(interface{ Usage() meter.Usage }).Usage()
}

// checkGeminiResponse checks a whole answer's shape.
func checkGeminiResponse(t *testing.T, b []byte) {
	t.Helper()
	if !gjson.ValidBytes(b) {
		t.Fatalf("answer is not JSON: %s", b)
	}
	r := gjson.ParseBytes(b)
	if r.Get("candidates.0.content.role").Str != "model" || !r.Get("candidates.0.content.parts").IsArray() {
		t.Errorf("answer has no model content: %s", b)
	}
	if r.Get("candidates.0.finishReason").Str == "" || !r.Get("usageMetadata.totalTokenCount").Exists() {
		t.Errorf("answer has no finish reason or usage: %s", b)
	}
	checkGeminiParts(t, r.Get("candidates.0.content.parts"))
}

func checkGeminiParts(t testing.TB, parts gjson.Result) {
	t.Helper()
	for _, part := range parts.Array() {
		if fc := part.Get("functionCall"); fc.Exists() && (fc.Get("name").Str == "" || !fc.Get("args").IsObject()) {
			t.Errorf("function call without a name or object args: %s", part.Raw)
		}
		if part.Get("thought").Bool() && part.Get("thoughtSignature").Exists() {
			t.Errorf("signature on a thought part, which clients may drop: %s", part.Raw)
		}
	}
}

// checkGeminiGrammar checks a Gemini client's stream: CRLF-framed data
// events, each a GenerateContentResponse or, last, an error object; a
// finish reason on the last response only; nothing after it.
func checkGeminiGrammar(t testing.TB, got []byte) {
	t.Helper()
	if bytes.HasPrefix(got, []byte("HTTP ")) {
		return // answered with an error instead of a stream
	}
	ended := false
	for rest := got; len(rest) > 0; {
		n := bytes.Index(rest, []byte("\r\n\r\n"))
		if n < 0 || !bytes.HasPrefix(rest, []byte("data: ")) {
			t.Fatalf("not a CRLF-framed data event: %q", rest)
		}
		data := rest[len("data: "):n]
		rest = rest[n+4:]
		if ended {
			t.Fatalf("event after the stream ended: %s", data)
		}
		if !gjson.ValidBytes(data) || bytes.ContainsAny(data, "\r\n") {
			t.Fatalf("event data is not one line of JSON: %q", data)
		}
		r := gjson.ParseBytes(data)
		if r.Get("error").Exists() {
			if r.Get("error.code").Int() == 0 || r.Get("error.status").Str == "" {
				t.Errorf("error event without code or status: %s", data)
			}
			ended = true
			continue
		}
		c := r.Get("candidates.0")
		if c.Get("content.role").Str != "model" || !r.Get("usageMetadata").IsObject() || !r.Get("responseId").Exists() {
			t.Errorf("event is not a GenerateContentResponse: %s", data)
		}
		checkGeminiParts(t, c.Get("content.parts"))
		ended = c.Get("finishReason").Exists()
	}
	if !ended {
		t.Errorf("the stream does not end")
	}
}

// geminiGoldenStreams lists the golden files with an upstream stream.
func geminiGoldenStreams(tb testing.TB) []string {
	files, _ := filepath.Glob("testdata/gemini_answers/*.txtar")
	var out []string
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		if _, ok := section(a, "upstream.sse"); ok {
			out = append(out, file)
		}
	}
	if len(out) == 0 {
		tb.Fatal("no golden streams")
	}
	return out
}

// FuzzStreamToGemini feeds an upstream stream (of the pair and plan of the
// golden file which picks; the fuzzer changes its bytes) in the pieces
// cuts describes, through a read buffer poisoned after every call, and
// wants what the same bytes give in one piece through a buffer never
// overwritten, and a Gemini client's grammar.
func FuzzStreamToGemini(f *testing.F) {
	files := geminiGoldenStreams(f)
	for i, file := range files {
		a, _ := txtar.ParseFile(file)
		up, _ := section(a, "upstream.sse")
		f.Add(uint16(i), up, []byte{1})
		f.Add(uint16(i), up, []byte{7, 3, 200, 1, 64})
	}
	f.Fuzz(func(t *testing.T, which uint16, up, cuts []byte) {
		_, pair, plan := loadGeminiGolden(t, files[int(which)%len(files)])
		whole, _ := geminiStream(t, pair, up, plan, func() int { return len(up) }, false)
		i := 0
		next := func() int {
			if len(cuts) == 0 {
				return 1
			}
			n := int(cuts[i%len(cuts)])
			i++
			return n
		}
		split, _ := geminiStream(t, pair, up, plan, next, true)
		if !bytes.Equal(normalizeGemini(split), normalizeGemini(whole)) {
			t.Fatalf("the stream read in pieces %v through a poisoned buffer differs:\n--- pieces\n%s\n--- whole\n%s", cuts, split, whole)
		}
		checkGeminiGrammar(t, whole)
	})
}

// FuzzAnswerToGemini: a whole upstream answer, whatever its bytes, is a
// valid Gemini answer or an *UpstreamError.
func FuzzAnswerToGemini(f *testing.F) {
	files, _ := filepath.Glob("testdata/gemini_answers/*.txtar")
	for i, file := range files {
		a, _ := txtar.ParseFile(file)
		if up, ok := section(a, "upstream.json"); ok {
			f.Add(uint16(i), up)
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, up []byte) {
		_, pair, plan := loadGeminiGolden(t, files[int(which)%len(files)])
		plan.Stream = false
		out, _, _, err := pair.answer(up, plan, goldenCreated)
		if err != nil {
			var ue *UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error is not an *UpstreamError: %v", err)
			}
			return
		}
		checkGeminiResponse(t, out)
	})
}

// TestGeminiSignatureCarriesReasoning opens the thoughtSignature a Gemini
// client gets and finds the upstream's reasoning as it needs it back.
func TestGeminiSignatureCarriesReasoning(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string // the sealed value
	}{
		{"g2m_thinking_signature", `{"blocks":[{"type":"thinking","thinking":"Let me think.\nThe file first.","signature":"EqQBSIG"},{"type":"redacted_thinking","data":"EmwKREDACTED"}]}`},
		{"g2m_thinking_hidden", `{"blocks":[{"type":"thinking","thinking":"Hmm.","signature":"SIGX"}]}`},
		{"g2c_reasoning", `{"text":"First, add."}`},
		{"g2r_reasoning_tools", `{"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Plan."},{"type":"summary_text","text":"Read."}],"encrypted_content":"gAAAENC"}}`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			a, pair, plan := loadGeminiGolden(t, "testdata/gemini_answers/"+tc.file+".txtar")
			up, _ := section(a, "upstream.sse")
			got, _ := geminiStream(t, pair, up, plan, func() int { return len(up) }, false)
			sigs := regexp.MustCompile(`"thoughtSignature":"([^"]+)"`).FindAllSubmatch(got, -1)
			if len(sigs) != 1 {
				t.Fatalf("want one signature, got %d:\n%s", len(sigs), got)
			}
			payload, ok := goldenSigner.unsealSignature(string(sigs[0][1]))
			if !ok || string(payload) != tc.want {
				t.Errorf("sealed %s (ok %v), want %s", payload, ok, tc.want)
			}
			whole, _, _, _ := pair.answer(mustSection(t, a, "upstream.json"), plan, goldenCreated)
			if w := gjson.GetBytes(whole, "candidates.0.content.parts.#.thoughtSignature").Array(); len(w) != 1 || w[0].Str != string(sigs[0][1]) {
				t.Errorf("the whole answer's signature differs from the stream's: %s", whole)
			}
		})
	}
}

func mustSection(t *testing.T, a *txtar.Archive, name string) []byte {
	t.Helper()
	b, ok := section(a, name)
	if !ok {
		t.Fatalf("no section %s", name)
	}
	return b
}

// TestErrorsToGemini: upstream errors in Google's envelope, by status.
func TestErrorsToGemini(t *testing.T) {
	for _, tc := range []struct {
		translate func(int, []byte) (int, []byte, bool)
		name      string
		status    int
		body      string
		want      int
		wantOut   string
		noRetry   bool
	}{
		{AnthropicErrorToGemini, "invalid", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, 400,
			`{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`, false},
		{AnthropicErrorToGemini, "gateway credential", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, 502,
			`{"error":{"code":502,"message":"upstream rejected the gateway's credential: invalid x-api-key","status":"UNAVAILABLE"}}`, true},
		{AnthropicErrorToGemini, "billing", 402, `{"type":"error","error":{"type":"billing_error","message":"no credit"}}`, 502,
			`{"error":{"code":502,"message":"upstream billing error: no credit","status":"UNAVAILABLE"}}`, true},
		{AnthropicErrorToGemini, "permission", 403, `{"type":"error","error":{"type":"permission_error","message":"no"}}`, 403,
			`{"error":{"code":403,"message":"no","status":"PERMISSION_DENIED"}}`, false},
		{AnthropicErrorToGemini, "not found", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`, 404,
			`{"error":{"code":404,"message":"model: x","status":"NOT_FOUND"}}`, false},
		{AnthropicErrorToGemini, "too large", 413, `{"type":"error","error":{"type":"request_too_large","message":"big"}}`, 413,
			`{"error":{"code":413,"message":"big","status":"INVALID_ARGUMENT"}}`, false},
		{AnthropicErrorToGemini, "rate limit", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, 429,
			`{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`, false},
		{AnthropicErrorToGemini, "rate limit with delay", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"retry after 1.5 seconds"}}`, 429,
			`{"error":{"code":429,"message":"retry after 1.5 seconds","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`, false},
		{AnthropicErrorToGemini, "overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 503,
			`{"error":{"code":503,"message":"Overloaded","status":"UNAVAILABLE"}}`, false},
		{AnthropicErrorToGemini, "overloaded in a stream", 0, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 503,
			`{"error":{"code":503,"message":"Overloaded","status":"UNAVAILABLE"}}`, false},
		{AnthropicErrorToGemini, "timeout", 504, `{"type":"error","error":{"type":"timeout_error","message":"slow"}}`, 504,
			`{"error":{"code":504,"message":"slow","status":"DEADLINE_EXCEEDED"}}`, false},
		{AnthropicErrorToGemini, "api error", 500, `{"type":"error","error":{"type":"api_error","message":"oops"}}`, 500,
			`{"error":{"code":500,"message":"oops","status":"INTERNAL"}}`, false},
		{AnthropicErrorToGemini, "html from a proxy", 502, `<html>Bad Gateway</html>`, 502,
			`{"error":{"code":502,"message":"<html>Bad Gateway</html>","status":"UNAVAILABLE"}}`, false},
		{OpenAIErrorToGemini, "invalid", 400, `{"error":{"message":"bad","type":"invalid_request_error","param":"x","code":null}}`, 400,
			`{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`, false},
		{OpenAIErrorToGemini, "unprocessable", 422, `{"error":{"message":"no","type":"invalid_request_error"}}`, 400,
			`{"error":{"code":400,"message":"no","status":"INVALID_ARGUMENT"}}`, false},
		{OpenAIErrorToGemini, "gateway credential", 401, `{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}`, 502,
			`{"error":{"code":502,"message":"upstream rejected the gateway's credential or account: Incorrect API key","status":"UNAVAILABLE"}}`, true},
		{OpenAIErrorToGemini, "quota", 429, `{"error":{"message":"You exceeded your quota","type":"insufficient_quota","code":"insufficient_quota"}}`, 502,
			`{"error":{"code":502,"message":"upstream rejected the gateway's credential or account: You exceeded your quota","status":"UNAVAILABLE"}}`, true},
		{OpenAIErrorToGemini, "not found", 404, `{"error":{"message":"The model x does not exist","type":"invalid_request_error","code":"model_not_found"}}`, 404,
			`{"error":{"code":404,"message":"The model x does not exist","status":"NOT_FOUND"}}`, false},
		{OpenAIErrorToGemini, "rate limit", 429, `{"error":{"message":"Rate limit reached. Please try again in 20s.","type":"requests","code":"rate_limit_exceeded"}}`, 429,
			`{"error":{"code":429,"message":"Rate limit reached. Please try again in 20s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"20s"}]}}`, false},
		{OpenAIErrorToGemini, "overloaded", 503, `{"error":{"message":"engine is overloaded","type":"server_error"}}`, 503,
			`{"error":{"code":503,"message":"engine is overloaded","status":"UNAVAILABLE"}}`, false},
		{OpenAIErrorToGemini, "server error in a stream", 0, `{"error":{"message":"oops","type":"server_error"}}`, 500,
			`{"error":{"code":500,"message":"oops","status":"INTERNAL"}}`, false},
		{OpenAIErrorToGemini, "conflict", 409, `{"error":{"message":"busy","type":"invalid_request_error"}}`, 409,
			`{"error":{"code":409,"message":"busy","status":"ABORTED"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, noRetry := tc.translate(tc.status, []byte(tc.body))
			if status != tc.want || string(out) != tc.wantOut || noRetry != tc.noRetry {
				t.Errorf("(%d, %s) = %d, %s, %v; want %d, %s, %v", tc.status, tc.body, status, out, noRetry, tc.want, tc.wantOut, tc.noRetry)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	for msg, want := range map[string]string{
		"Please try again in 20s.":               "20s",
		"Please try again in 1.5 seconds":        "1.5s",
		"Rate limit reached. Try again in 120ms": "0.12s",
		"retry after 2 minutes":                  "120s",
		"slow down":                              "",
	} {
		if got := retryDelay(msg); got != want {
			t.Errorf("retryDelay(%q) = %q, want %q", msg, got, want)
		}
	}
}

// tap is dialect.Tap, which this package cannot import: the Gemini
// streams are what the gateway relays through.
type tap interface {
	stream
	Usage() meter.Usage
}

var (
	_ tap = (*MessagesToGeminiStream)(nil)
	_ tap = (*ChatToGeminiStream)(nil)
	_ tap = (*ResponsesToGeminiStream)(nil)
)
