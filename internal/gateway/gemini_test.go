package gateway_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// newGeminiEnv starts a gateway with a gemini provider on up, an
// anthropic provider on ant (either may be nil) and echo.
func newGeminiEnv(t *testing.T, up, ant *upstreamtest.Server) *env {
	t.Helper()
	upURL, antURL := "http://127.0.0.1:1", "http://127.0.0.1:1"
	if up != nil {
		upURL = up.URL
		t.Cleanup(up.Close)
	}
	if ant != nil {
		antURL = ant.URL
		t.Cleanup(ant.Close)
	}
	return newEnvYAML(t, `
server: { max_body_bytes: 4096 }
providers:
  - { name: goo, type: gemini, base_url: "`+upURL+`", api_key: "`+upstreamKey+`" }
  - { name: ant, type: anthropic, base_url: "`+antURL+`", api_key: "`+upstreamKey+`" }
  - { name: demo, type: echo }
models:
  - { name: gem, aliases: [gem-alias], targets: [ { provider: goo, model: gemini-upstream-id } ] }
  - { name: claude-x, targets: [ { provider: ant, model: claude-upstream-id } ] }
  - { name: echo, aliases: ["gemini-*"], targets: [ { provider: demo } ] }
`)
}

var geminiAuth = []string{"x-goog-api-key: " + masterKey}

// A body with members the gateway knows nothing about, odd spacing and
// escapes a re-encoder would change.
const geminiRequest = `{ "contents": [{"role":"user","parts":[{"text":"Weather in <Paris> & \u00fc?"}]}],
  "generationConfig": {"temperature": 0.70, "maxOutputTokens": 100, "thinkingConfig": {"includeThoughts": true}},
  "x_unknown": [1, 2.50, 1e3] }`

// The pass-through lane: the upstream gets the client's bytes untouched,
// at the target's model in the URL; the client gets the upstream's bytes
// (an array when it did not ask for alt=sse); usage reaches the log.
func TestGeminiPassthrough(t *testing.T) {
	stream := upstreamtest.File("gemini_stream.sse")
	events := upstreamtest.Events("gemini_stream.sse")
	var array []byte
	for i, ev := range events {
		if i == 0 {
			array = append(array, '[')
		} else {
			array = append(array, "\n,\r\n"...)
		}
		array = append(array, bytes.TrimSuffix(bytes.TrimPrefix(ev, []byte("data: ")), []byte("\r\n\r\n"))...)
	}
	array = append(array, ']')
	streamUsage := map[string]int64{"input_tokens": 176, "cache_read_tokens": 1024, "output_tokens": 71}
	tests := []struct {
		name, path  string
		reply       upstreamtest.Reply
		headers     []string
		upPath      string
		upQuery     string
		want        []byte
		contentType string
		usage       map[string]int64
	}{
		{"generateContent", "/v1beta/models/gem:generateContent", upstreamtest.Reply{Body: upstreamtest.File("gemini_answer.json")},
			geminiAuth, "/v1beta/models/gemini-upstream-id:generateContent", "", upstreamtest.File("gemini_answer.json"), "application/json",
			map[string]int64{"input_tokens": 308, "cache_read_tokens": 512, "output_tokens": 32}},
		{"models/ prefix, v1, key in query", "/v1/models/models/gem-alias:generateContent?key=" + masterKey, upstreamtest.Reply{Body: upstreamtest.File("gemini_answer.json")},
			nil, "/v1beta/models/gemini-upstream-id:generateContent", "", upstreamtest.File("gemini_answer.json"), "application/json",
			map[string]int64{"input_tokens": 308}},
		{"stream, sse", "/v1beta/models/gem:streamGenerateContent?alt=sse", upstreamtest.Reply{Events: events},
			geminiAuth, "/v1beta/models/gemini-upstream-id:streamGenerateContent", "alt=sse", stream, "text/event-stream", streamUsage},
		{"stream, json array", "/v1beta/models/gem:streamGenerateContent", upstreamtest.Reply{Events: events},
			[]string{"Authorization: Bearer " + masterKey}, "/v1beta/models/gemini-upstream-id:streamGenerateContent", "alt=sse", array, "application/json", streamUsage},
		{"stream, alt=json", "/v1beta/models/gem:streamGenerateContent?alt=json&key=" + masterKey, upstreamtest.Reply{Events: events},
			nil, "/v1beta/models/gemini-upstream-id:streamGenerateContent", "alt=sse", array, "application/json", streamUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.Static(tc.reply)
			e := newGeminiEnv(t, up, nil)
			resp := e.do("POST", tc.path, geminiRequest, append(tc.headers,
				"x-goog-api-client: genai-js/1.20.0 gl-node/22", "x-gemini-api-privileged-user-id: user-7", "X-Custom-Secret: no")...)
			got := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("client got:\n %q\nwant\n %q", got, tc.want)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.contentType) {
				t.Errorf("content type %q, want %s", ct, tc.contentType)
			}
			rec := up.Last()
			if string(rec.Body) != geminiRequest {
				t.Errorf("upstream body differs from the client's:\n got %s\nwant %s", rec.Body, geminiRequest)
			}
			if rec.Path != tc.upPath || rec.Query != tc.upQuery {
				t.Errorf("upstream URL %s?%s, want %s?%s", rec.Path, rec.Query, tc.upPath, tc.upQuery)
			}
			checkUpstreamHeaders(t, rec, map[string]string{
				"X-Goog-Api-Key": upstreamKey, "X-Goog-Api-Client": "genai-js/1.20.0 gl-node/22",
				"X-Gemini-Api-Privileged-User-Id": "user-7", "X-Custom-Secret": "", "Authorization": "",
			})
			line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
			for k, v := range tc.usage {
				if g := line.Get(k).Int(); g != v {
					t.Errorf("log %s = %d, want %d", k, g, v)
				}
			}
			if line.Get("lane").String() != "passthrough" ||
				line.Get("model").String() == "" {
				t.Errorf("log line = %s", line.Raw)
			}
			if strings.Contains(e.logs.String(), masterKey) {
				t.Errorf("the key reached the log: %s", e.logs.String())
			}
		})
	}
}

// countTokens: the upstream counts on the pass-through lane (a wrapped
// body gets the target's model); echo counts locally.
func TestGeminiCountTokens(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: []byte(`{"totalTokens": 31, "cachedContentTokenCount": 0}`)})
	e := newGeminiEnv(t, up, nil)
	for _, body := range []string{
		`{"contents":[{"parts":[{"text":"hi"}]}]}`,
		`{"generateContentRequest":{"model":"models/gem","contents":[{"parts":[{"text":"hi"}]}]}}`,
	} {
		resp := e.do("POST", "/v1beta/models/gem:countTokens", body, geminiAuth...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || gjson.GetBytes(got, "totalTokens").Int() != 31 {
			t.Fatalf("status %d: %s", resp.StatusCode, got)
		}
		rec := up.Last()
		if rec.Path != "/v1beta/models/gemini-upstream-id:countTokens" ||
			gjson.GetBytes(rec.Body, "generateContentRequest.model").String() != "models/gemini-upstream-id" ||
			gjson.GetBytes(rec.Body, "generateContentRequest.contents.0.parts.0.text").String() != "hi" {
			t.Errorf("upstream got %s %s", rec.Path, rec.Body)
		}
	}
	resp := e.do("POST", "/v1beta/models/gemini-2.5-flash:countTokens", `{"contents":[{"parts":[{"text":"hello there"}]}]}`, geminiAuth...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || gjson.GetBytes(got, "totalTokens").Int() <= 0 {
		t.Fatalf("echo count: status %d: %s", resp.StatusCode, got)
	}
	if resp.Header.Get("Tollgate-Token-Count") != "estimate" {
		t.Errorf("echo count not flagged as an estimate")
	}
}

// The zero configuration's echo answers a Gemini client in Gemini's shape.
func TestGeminiEcho(t *testing.T) {
	e := newGeminiEnv(t, nil, nil)
	body := `{"contents":[{"role":"user","parts":[{"text":"Hello gateway"}]}]}`
	resp := e.do("POST", "/v1beta/models/gemini-2.5-pro:generateContent", body, geminiAuth...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || gjson.GetBytes(got, "candidates.0.content.parts.0.text").String() != "Hello gateway" ||
		gjson.GetBytes(got, "usageMetadata.promptTokenCount").Int() == 0 {
		t.Fatalf("status %d: %s", resp.StatusCode, got)
	}
	resp = e.do("POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", body, geminiAuth...)
	got = readAll(t, resp.Body)
	resp.Body.Close()
	var text string
	for _, el := range gjson.ParseBytes(got).Array() {
		text += el.Get("candidates.0.content.parts.0.text").String()
	}
	if resp.StatusCode != 200 || text != "Hello gateway" || got[0] != '[' {
		t.Fatalf("stream: status %d: %s", resp.StatusCode, got)
	}
	if line := e.logLine(resp.Header.Get("Tollgate-Request-Id")); line.Get("output_tokens").Int() == 0 || !line.Get("stream").Bool() {
		t.Errorf("log line = %s", line.Raw)
	}
}

// The key comes in x-goog-api-key, ?key= or Authorization: Bearer, in
// exactly one of them; refusals are Google's envelopes.
func TestGeminiAuth(t *testing.T) {
	e := newGeminiEnv(t, nil, nil)
	const body = `{"contents":[{"parts":[{"text":"hi"}]}]}`
	const path = "/v1beta/models/echo:generateContent"
	tests := []struct {
		name    string
		query   string
		headers []string
		status  int
		gstatus string
	}{
		{"header", "", geminiAuth, 200, ""},
		{"query", "?key=" + masterKey, nil, 200, ""},
		{"bearer", "", []string{"Authorization: Bearer " + masterKey}, 200, ""},
		{"none", "", nil, 401, "UNAUTHENTICATED"},
		{"bad key", "?key=sk-wrong", nil, 401, "UNAUTHENTICATED"},
		{"header and query", "?key=" + masterKey, geminiAuth, 400, "INVALID_ARGUMENT"},
		{"header and bearer", "", append([]string{"Authorization: Bearer " + masterKey}, geminiAuth...), 400, "INVALID_ARGUMENT"},
		{"query twice", "?key=" + masterKey + "&key=" + masterKey, nil, 400, "INVALID_ARGUMENT"},
	}
	for _, tc := range tests {
		resp := e.do("POST", path+tc.query, body, tc.headers...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d: %s", tc.name, resp.StatusCode, got)
			continue
		}
		if tc.gstatus != "" {
			checkGoogleError(t, tc.name, got, tc.status, tc.gstatus)
		}
	}
	if strings.Contains(e.logs.String(), masterKey) || strings.Contains(e.logs.String(), "sk-wrong") {
		t.Errorf("a key reached the log: %s", e.logs.String())
	}
}

// checkGoogleError checks Google's envelope, as @google/genai and
// go-genai read it: error.code, error.message, error.status.
func checkGoogleError(t *testing.T, name string, body []byte, code int, status string) {
	t.Helper()
	e := gjson.GetBytes(body, "error")
	if e.Get("code").Int() != int64(code) || e.Get("status").String() != status || e.Get("message").String() == "" {
		t.Errorf("%s: error envelope %s, want code %d status %s", name, body, code, status)
	}
}

// The errors the gateway makes itself reach Gemini clients in Google's
// envelope with the right status.
func TestGeminiErrors(t *testing.T) {
	e := newGeminiEnv(t, nil, nil)
	ok := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	tests := []struct {
		name, method, path, body string
		status                   int
		gstatus                  string
	}{
		{"unknown model", "POST", "/v1beta/models/nope:generateContent", ok, 404, "NOT_FOUND"},
		{"unknown method", "POST", "/v1beta/models/gem:embedContent", ok, 404, "NOT_FOUND"},
		{"no method", "POST", "/v1beta/models/gem", ok, 404, "NOT_FOUND"},
		{"bad JSON", "POST", "/v1beta/models/gem:generateContent", `{"contents":[`, 400, "INVALID_ARGUMENT"},
		{"no contents", "POST", "/v1beta/models/gem:generateContent", `{}`, 400, "INVALID_ARGUMENT"},
		{"empty contents", "POST", "/v1beta/models/gem:generateContent", `{"contents":[]}`, 400, "INVALID_ARGUMENT"},
		{"bad alt", "POST", "/v1beta/models/gem:streamGenerateContent?alt=proto", ok, 400, "INVALID_ARGUMENT"},
		{"too large", "POST", "/v1beta/models/gem:generateContent", `{"contents":[{"parts":[{"text":"` + strings.Repeat("x", 5000) + `"}]}]}`, 413, "INVALID_ARGUMENT"},
		{"wrong method", "DELETE", "/v1beta/models/gem:generateContent", "", 405, "UNIMPLEMENTED"},
		{"unknown model get", "GET", "/v1beta/models/nope", "", 404, "NOT_FOUND"},
		{"bad page token", "GET", "/v1beta/models?pageToken=zz", "", 400, "INVALID_ARGUMENT"},
	}
	for _, tc := range tests {
		resp := e.do(tc.method, tc.path, tc.body, geminiAuth...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, resp.StatusCode, tc.status, got)
			continue
		}
		checkGoogleError(t, tc.name, got, tc.status, tc.gstatus)
		if resp.Header.Get("X-Goog-Request-Id") == "" {
			t.Errorf("%s: no request id header", tc.name)
		}
	}
}

// GET /v1beta/models lists the models in Google's shape, a page at a
// time; GET /v1/models is Gemini's list only for a Gemini key place.
func TestGeminiModels(t *testing.T) {
	e := newGeminiEnv(t, nil, nil)
	var names []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the pages do not end")
		}
		path := "/v1beta/models?pageSize=2"
		if token != "" {
			path += "&pageToken=" + token
		}
		resp := e.do("GET", path, "", geminiAuth...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, got)
		}
		models := gjson.GetBytes(got, "models").Array()
		if len(models) > 2 {
			t.Fatalf("page of %d: %s", len(models), got)
		}
		for _, m := range models {
			names = append(names, m.Get("name").String())
			if m.Get("supportedGenerationMethods.#").Int() != 3 {
				t.Errorf("model %s", m.Raw)
			}
		}
		token = gjson.GetBytes(got, "nextPageToken").String()
		if token == "" {
			break
		}
	}
	if want := "models/gem,models/gem-alias,models/claude-x,models/echo"; strings.Join(names, ",") != want {
		t.Errorf("models %v, want %s", names, want)
	}
	for _, tc := range []struct {
		path    string
		headers []string
		gemini  bool
	}{
		{"/v1/models?key=" + masterKey, nil, true},
		{"/v1/models", geminiAuth, true},
		{"/v1/models", openAIAuth, false},
	} {
		resp := e.do("GET", tc.path, "", tc.headers...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || gjson.GetBytes(got, "models").Exists() != tc.gemini || gjson.GetBytes(got, "data").Exists() == tc.gemini {
			t.Errorf("%s %v: %d %s", tc.path, tc.headers, resp.StatusCode, got)
		}
	}
	for _, path := range []string{"/v1beta/models/gem", "/v1/models/gem?key=" + masterKey} {
		resp := e.do("GET", path, "", geminiAuth[:len(geminiAuth)*btoi(!strings.Contains(path, "key="))]...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || gjson.GetBytes(got, "name").String() != "models/gem" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, got)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The privileged user id is Google's: a Gemini client's request that is
// translated for another upstream does not carry it there.
func TestGeminiPrivilegedUserNotForwarded(t *testing.T) {
	if dialect.For(dialect.Gemini, dialect.Messages) == nil {
		t.Skip("no translator from Gemini clients to Messages upstreams is registered")
	}
	ant := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	e := newGeminiEnv(t, nil, ant)
	resp := e.do("POST", "/v1beta/models/claude-x:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`,
		append(geminiAuth, "x-gemini-api-privileged-user-id: user-7", "x-goog-api-client: genai-js/1.20.0")...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, got)
	}
	checkUpstreamHeaders(t, ant.Last(), map[string]string{"X-Gemini-Api-Privileged-User-Id": "", "X-Goog-Api-Client": ""})
}

// A refused request is RESOURCE_EXHAUSTED with google.rpc.RetryInfo
// saying when to retry, which Google's SDKs read.
func TestGeminiRateLimitRetryInfo(t *testing.T) {
	e := newEnvYAML(t, `
providers: [ { name: demo, type: echo } ]
models:
  - { name: gem, targets: [ { provider: demo } ], limits: { rpm: 1 } }
`)
	body := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	resp := e.do("POST", "/v1beta/models/gem:generateContent", body, geminiAuth...)
	readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	resp = e.do("POST", "/v1beta/models/gem:generateContent", body, geminiAuth...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 {
		t.Fatalf("second: %d %s", resp.StatusCode, got)
	}
	checkGoogleError(t, "rate limit", got, 429, "RESOURCE_EXHAUSTED")
	d := gjson.GetBytes(got, `error.details.#(@type=="type.googleapis.com/google.rpc.RetryInfo").retryDelay`).String()
	if !strings.HasSuffix(d, "s") || d == "0s" || resp.Header.Get("Retry-After")+"s" != d {
		t.Errorf("retryDelay %q, Retry-After %q: %s", d, resp.Header.Get("Retry-After"), got)
	}
	for k := range resp.Header {
		if k == "" || strings.HasPrefix(k, "X-Ratelimit") {
			t.Errorf("header %q on a Gemini answer", k)
		}
	}
}

// The zero configuration answers a Gemini client (gemini-* is echo's).
func TestGeminiZeroConfig(t *testing.T) {
	built, err := cli.Build(config.Default(), cli.Options{MasterKey: masterKey, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(built.Handler)
	t.Cleanup(func() { gw.Close(); built.Close() })
	e := &env{t: t, gw: gw, logs: &syncBuffer{}}
	resp := e.do("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key="+masterKey,
		`{"contents":[{"role":"user","parts":[{"text":"Hello, gateway"}]}]}`)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
		!bytes.Contains(got, []byte(`"finishReason":"STOP"`)) || !bytes.HasPrefix(got, []byte("data: ")) {
		t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
}

// An upstream's own errors reach the client as Google sent them: a 400
// answer as it is, and a stream that begins with an error object as that
// error's status and body.
func TestGeminiUpstreamErrors(t *testing.T) {
	bad := []byte(`{"error": {"code": 400, "message": "Invalid JSON payload received.", "status": "INVALID_ARGUMENT"}}`)
	up := upstreamtest.Static(upstreamtest.Reply{Status: 400, Body: bad})
	e := newGeminiEnv(t, up, nil)
	resp := e.do("POST", "/v1beta/models/gem:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`, geminiAuth...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !bytes.Equal(got, bad) {
		t.Errorf("relayed %d %s", resp.StatusCode, got)
	}
	for _, tc := range []struct {
		event, path string
		status      int
		want        string // the body, or the error status in it
	}{
		// A 403 refuses the gateway's credential, not the client's request.
		{`{"error":{"code":403,"message":"quota","status":"PERMISSION_DENIED"}}`, "?alt=sse", 502, "UNAVAILABLE"},
		{`{"error":{"code":400,"message":"bad part","status":"INVALID_ARGUMENT"}}`, "", 400,
			`{"error":{"code":400,"message":"bad part","status":"INVALID_ARGUMENT"}}`},
	} {
		up := upstreamtest.Static(upstreamtest.Reply{Events: [][]byte{[]byte("data: " + tc.event + "\r\n\r\n")}})
		e := newGeminiEnv(t, up, nil)
		resp := e.do("POST", "/v1beta/models/gem:streamGenerateContent"+tc.path, `{"contents":[{"parts":[{"text":"hi"}]}]}`, geminiAuth...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || string(got) != tc.want && gjson.GetBytes(got, "error.status").String() != tc.want ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("stream beginning with %s: %d %s", tc.event, resp.StatusCode, got)
		}
	}
}

// A count the gateway makes itself reads the prompt the body stands for:
// {contents} and the older SDKs' {generateContentRequest: {contents}}
// count the same. A body with neither is refused in Google's envelope on
// every lane, before any upstream is asked.
func TestGeminiCountBodies(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: []byte(`{"totalTokens": 31}`)})
	e := newGeminiEnv(t, up, nil)
	contents := `[{"role":"user","parts":[{"text":"` + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20) + `"}]}]`
	count := func(path, body string) int64 {
		t.Helper()
		resp := e.do("POST", path, body, geminiAuth...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Tollgate-Token-Count") != "estimate" {
			t.Fatalf("%s %s: %d %s", path, body, resp.StatusCode, got)
		}
		return gjson.GetBytes(got, "totalTokens").Int()
	}
	// claude-x's upstream has no count a Gemini client's request can ask.
	const path = "/v1beta/models/claude-x:countTokens"
	plain := count(path, `{"contents":`+contents+`}`)
	wrapped := count(path, `{"generateContentRequest":{"model":"models/claude-x","contents":`+contents+`}}`)
	if plain < 100 || wrapped != plain {
		t.Errorf("contents counted %d tokens, the same wrapped in generateContentRequest %d", plain, wrapped)
	}
	for _, model := range []string{"claude-x", "gem", "echo"} {
		for _, body := range []string{
			`{}`,
			`{"generateContentRequest":{}}`,
			`{"generateContentRequest":{"model":"models/gem"}}`,
			`{"contents":[]}`,
			`{"generateContentRequest":{"contents":[]}}`,
			`{"generateContentRequest":"x"}`,
			`{"generateContentRequest":{"contents":5}}`,
		} {
			resp := e.do("POST", "/v1beta/models/"+model+":countTokens", body, geminiAuth...)
			got := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 {
				t.Errorf("%s %s: %d %s", model, body, resp.StatusCode, got)
				continue
			}
			checkGoogleError(t, model+" "+body, got, 400, "INVALID_ARGUMENT")
		}
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("the upstream was asked %d times", n)
	}
}

// /v1/models/ is shared: Gemini's routes under it are a model and one of
// its methods after the last colon, or a request with Google's key place.
// Others keep the answers of the other protocols' clients: a model id
// with a colon (as Ollama's and Bedrock's have) in their shape, and 405
// for anything but GET in their envelope.
func TestGeminiSharedModelRoutes(t *testing.T) {
	e := newEnvYAML(t, `
providers: [ { name: demo, type: echo } ]
models:
  - { name: "llama3:8b", targets: [ { provider: demo } ] }
  - { name: gem, targets: [ { provider: demo } ] }
`)
	const gen = `{"contents":[{"parts":[{"text":"hi"}]}]}`
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		shape                    string // "openai", "anthropic" or "gemini"
		allow                    string // the Allow header of a 405
	}{
		{"openai GET id with colon", "GET", "/v1/models/llama3:8b", "", openAIAuth, 200, "openai", ""},
		{"anthropic GET id with colon", "GET", "/v1/models/llama3:8b", "", anthropicAuth, 200, "anthropic", ""},
		{"openai GET unknown id with colon", "GET", "/v1/models/nope:1b", "", openAIAuth, 404, "openai", ""},
		{"openai POST", "POST", "/v1/models/gem", gen, openAIAuth, 405, "openai", "GET"},
		{"openai POST id with colon", "POST", "/v1/models/llama3:8b", gen, openAIAuth, 405, "openai", "GET"},
		{"openai POST, no key", "POST", "/v1/models/gem", gen, nil, 405, "openai", "GET"},
		{"anthropic POST", "POST", "/v1/models/llama3:8b", gen, anthropicAuth, 405, "anthropic", "GET"},
		{"openai DELETE", "DELETE", "/v1/models/gem", "", openAIAuth, 405, "openai", "GET"},
		{"gemini generateContent, bearer", "POST", "/v1/models/gem:generateContent", gen, openAIAuth, 200, "gemini", ""},
		{"gemini countTokens, bearer", "POST", "/v1/models/gem:countTokens", gen, openAIAuth, 200, "gemini", ""},
		{"gemini stream, v1beta", "POST", "/v1beta/models/gem:streamGenerateContent?alt=sse", gen, openAIAuth, 200, "gemini", ""},
		{"gemini GET with its key", "GET", "/v1/models/gem", "", geminiAuth, 200, "gemini", ""},
		{"gemini GET id with colon, its key", "GET", "/v1/models/llama3:8b?key=" + masterKey, "", nil, 200, "gemini", ""},
		{"gemini list with its key", "GET", "/v1/models", "", geminiAuth, 200, "gemini", ""},
		{"gemini POST without method, its key", "POST", "/v1/models/gem", gen, geminiAuth, 404, "gemini", ""},
		{"gemini unknown method, its key", "POST", "/v1/models/gem:embedContent", gen, geminiAuth, 404, "gemini", ""},
		{"gemini DELETE", "DELETE", "/v1/models/gem:generateContent", "", geminiAuth, 405, "gemini", "GET, POST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.do(tc.method, tc.path, tc.body, tc.headers...)
			got := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, got)
			}
			if a := resp.Header.Get("Allow"); a != tc.allow {
				t.Errorf("Allow %q, want %q", a, tc.allow)
			}
			var shape string
			switch j := gjson.ParseBytes(got); {
			case j.Get("error.status").Exists(), j.Get("candidates").Exists(), j.Get("totalTokens").Exists(),
				j.Get("models").Exists(), j.Get("supportedGenerationMethods").Exists(), j.Get("events").Exists(),
				bytes.HasPrefix(got, []byte("data: {\"candidates\"")):
				shape = "gemini"
			case j.Get("type").String() == "error", j.Get("type").String() == "model":
				shape = "anthropic"
			case j.Get("error.type").Exists(), j.Get("object").String() == "model":
				shape = "openai"
			}
			if shape != tc.shape {
				t.Errorf("answered in %q shape, want %s: %s", shape, tc.shape, got)
			}
		})
	}
}
