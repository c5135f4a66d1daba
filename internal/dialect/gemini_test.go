package dialect

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/sse"
)

func TestGeminiAddress(t *testing.T) {
	tests := []struct {
		rest, query string
		want        Address
		array       bool
		err         string // "route" for a RouteError, else part of a ScanError
	}{
		{rest: "gemini-2.5-pro:generateContent", want: Address{Model: "gemini-2.5-pro", Op: Generate}},
		{rest: "models/gemini-2.5-pro:generateContent", want: Address{Model: "gemini-2.5-pro", Op: Generate}},
		{rest: "g:streamGenerateContent", query: "alt=sse", want: Address{Model: "g", Op: Generate, Stream: true}},
		{rest: "g:streamGenerateContent", want: Address{Model: "g", Op: Generate, Stream: true}, array: true},
		{rest: "g:streamGenerateContent", query: "alt=json&key=k", want: Address{Model: "g", Op: Generate, Stream: true}, array: true},
		{rest: "g:countTokens", want: Address{Model: "g", Op: CountTokens, Fields: &geminiCountFields}},
		{rest: "name:with:colons:generateContent", want: Address{Model: "name:with:colons", Op: Generate}},
		{rest: "g:streamGenerateContent", query: "alt=proto", err: "alt: expected sse or json"},
		{rest: "g:embedContent", err: "route"},
		{rest: "g", err: "route"},
		{rest: ":generateContent", err: "model: expected"},
		{rest: "tunedModels/x:generateContent", err: "model: expected"},
		{rest: "models/:generateContent", err: "model: expected"},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("POST", "/v1beta/models/"+tc.rest+"?"+tc.query, nil)
		got, err := geminiAddress(r, tc.rest)
		var re *RouteError
		var se *ScanError
		switch {
		case tc.err == "route":
			if !errors.As(err, &re) {
				t.Errorf("%s: %v, want a RouteError", tc.rest, err)
			}
			continue
		case tc.err != "":
			if !errors.As(err, &se) || !strings.Contains(se.Msg, tc.err) {
				t.Errorf("%s?%s: %v, want %q", tc.rest, tc.query, err, tc.err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", tc.rest, err)
			continue
		}
		if (got.Frame != nil) != tc.array {
			t.Errorf("%s?%s: array framing %v", tc.rest, tc.query, got.Frame != nil)
		}
		if got.Model != tc.want.Model || got.Op != tc.want.Op || got.Stream != tc.want.Stream || got.Fields != tc.want.Fields {
			t.Errorf("%s?%s: %+v, want %+v", tc.rest, tc.query, got, tc.want)
		}
	}
}

// Apply puts the path's model and stream flag in the scan, and says the
// body holds no model.
func TestAddressApply(t *testing.T) {
	s, err := Scan([]byte(`{"contents":[{"parts":[]}],"model":"other","stream":false}`), &Gemini.Fields)
	if err != nil {
		t.Fatal(err)
	}
	a := &Address{Model: "g", Stream: true}
	a.Apply(&s)
	if string(s.Model) != "g" || !s.Stream || !s.HasModel || s.InBody() || s.Conversation != 1 {
		t.Errorf("%+v", s)
	}
	var none *Address
	s2 := s
	none.Apply(&s2)
	if string(s2.Model) != "g" {
		t.Errorf("a nil address changed the scan")
	}
}

func TestGeminiClaims(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		header         string
		want           bool
	}{
		{"GET", "/v1beta/models", "", true},
		{"GET", "/v1/models", "", false},
		{"GET", "/v1/models?key=k", "", true},
		{"GET", "/v1/models?pageSize=2&key=k", "", true},
		{"GET", "/v1/models?monkey=k", "", false},
		{"GET", "/v1/models", "X-Goog-Api-Key", true},
		{"POST", "/v1/models/g:generateContent", "", true},
		{"GET", "/v1/models/gpt-5", "", false},
		{"POST", "/v1/chat/completions", "", false},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		if tc.header != "" {
			r.Header.Set(tc.header, "k")
		}
		if got := Gemini.Claims(r); got != tc.want {
			t.Errorf("%s %s %s: claims %v", tc.method, tc.target, tc.header, got)
		}
	}
}

// Google's envelope as @google/genai and go-genai read it, with the
// retry time as google.rpc.RetryInfo.
func TestGoogleError(t *testing.T) {
	b := googleError(Error{Kind: RateLimit, Message: `slow "down"`, RetryAfter: 11500 * time.Millisecond})
	e := gjson.GetBytes(b, "error")
	if !gjson.ValidBytes(b) || e.Get("code").Int() != 429 || e.Get("status").Str != "RESOURCE_EXHAUSTED" || e.Get("message").Str != `slow "down"` ||
		e.Get("details.0.@type").Str != "type.googleapis.com/google.rpc.RetryInfo" || e.Get("details.0.retryDelay").Str != "12s" {
		t.Errorf("%s", b)
	}
	b = googleError(Error{Kind: Authentication, Message: "invalid API key"})
	if string(b) != `{"error":{"code":401,"message":"invalid API key","status":"UNAUTHENTICATED"}}` {
		t.Errorf("%s", b)
	}
	// The statuses a translated upstream error gets too (gemini.Status).
	for kind, want := range map[Kind]string{
		MethodNotAllowed: `"code":405,"message":"m","status":"UNIMPLEMENTED"`,
		TooLarge:         `"code":413,"message":"m","status":"INVALID_ARGUMENT"`,
		Upstream:         `"code":502,"message":"m","status":"UNAVAILABLE"`,
		NotImplemented:   `"code":501,"message":"m","status":"UNIMPLEMENTED"`,
		Unavailable:      `"code":503,"message":"m","status":"UNAVAILABLE"`,
		Timeout:          `"code":504,"message":"m","status":"DEADLINE_EXCEEDED"`,
		Budget:           `"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"`,
	} {
		if b := googleError(Error{Kind: kind, Message: "m"}); string(b) != `{"error":{`+want+`}}` {
			t.Errorf("%v: %s", kind, b)
		}
	}
}

func TestGeminiModelPage(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	var got []string
	token := ""
	for range 4 {
		v, err := geminiModelPage(ids, "2", token)
		if err != nil {
			t.Fatal(err)
		}
		page := v.(map[string]any)
		for _, m := range page["models"].([]any) {
			got = append(got, m.(map[string]any)["name"].(string))
		}
		next, _ := page["nextPageToken"].(string)
		if token = next; token == "" {
			break
		}
	}
	if strings.Join(got, ",") != "models/a,models/b,models/c,models/d,models/e" {
		t.Errorf("pages: %v", got)
	}
	v, _ := geminiModelPage(ids, "", "")
	if n := len(v.(map[string]any)["models"].([]any)); n != 5 {
		t.Errorf("default page: %d models", n)
	}
	for _, bad := range [][2]string{{"-1", ""}, {"x", ""}, {"", "zz"}, {"", "OTk"}} { // OTk: "99"
		if _, err := geminiModelPage(ids, bad[0], bad[1]); err == nil {
			t.Errorf("pageSize %q pageToken %q: no error", bad[0], bad[1])
		}
	}
}

const geminiStream = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"}}],\"usageMetadata\":{\"promptTokenCount\":10,\"totalTokenCount\":10}}\r\n\r\n" +
	"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"!\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":10,\"cachedContentTokenCount\":4,\"candidatesTokenCount\":2,\"totalTokenCount\":12}}\r\n\r\n"

func feedAll(tap Tap, stream string) (out []byte) {
	b := []byte(stream)
	for len(b) > 0 {
		k := sse.Split(b)
		out = append(out, tap.Feed(b[:k])...)
		b = b[k:]
	}
	return out
}

func TestGeminiTap(t *testing.T) {
	tap := Gemini.NewTap(false)
	if out := feedAll(tap, geminiStream); string(out) != geminiStream {
		t.Errorf("the tap changed the stream: %q", out)
	}
	if tail, clean := tap.Close(true, ""); tail != nil || !clean {
		t.Errorf("a finished stream ended with %q, %v", tail, clean)
	}
	if u := tap.Usage(); u.Input != 6 || u.CacheRead != 4 || u.Output != 2 {
		t.Errorf("usage %+v", u)
	}
	// Cut before its finishReason: an error object ends it.
	tap = Gemini.NewTap(false)
	feedAll(tap, geminiStream[:strings.Index(geminiStream, "\r\n\r\n")+4])
	tail, clean := tap.Close(true, "upstream stream ended before its final event")
	var f sse.Fields
	f.Parse(tail)
	if clean || gjson.GetBytes(f.Data, "error.status").Str != "UNAVAILABLE" || gjson.GetBytes(f.Data, "error.code").Int() != 502 {
		t.Errorf("cut stream ended with %q, %v", tail, clean)
	}
	// An error as the first event is the answer's status and body.
	status, body, ok := Gemini.NewTap(false).StartError([]byte("data: {\"error\":{\"code\":429,\"message\":\"quota\",\"status\":\"RESOURCE_EXHAUSTED\"}}\r\n\r\n"))
	if !ok || status != 429 || gjson.GetBytes(body, "error.message").Str != "quota" {
		t.Errorf("start error %d %s %v", status, body, ok)
	}
}

// Without alt=sse the client gets the JSON array Google serves, element
// by element as the events arrive.
func TestArrayFraming(t *testing.T) {
	a, err := geminiAddress(httptest.NewRequest("POST", "/v1beta/models/g:streamGenerateContent", nil), "g:streamGenerateContent")
	if err != nil {
		t.Fatal(err)
	}
	tap := a.Frame(Gemini.NewTap(false))
	var out []byte
	b := []byte(":keep-alive\n\n" + geminiStream)
	for len(b) > 0 {
		k := sse.Split(b)
		out = append(out, tap.Feed(b[:k])...)
		b = b[k:]
	}
	tail, clean := tap.Close(true, "")
	out = append(out, tail...)
	lines := strings.Split(strings.TrimSuffix(geminiStream, "\r\n\r\n"), "\r\n\r\n")
	want := "[" + strings.TrimPrefix(lines[0], "data: ") + "\n,\r\n" + strings.TrimPrefix(lines[1], "data: ") + "]"
	if string(out) != want || !clean {
		t.Errorf("got %q\nwant %q", out, want)
	}
	if !gjson.ValidBytes(out) || gjson.GetBytes(out, "#").Int() != 2 {
		t.Errorf("not a JSON array of two: %s", out)
	}
	if tap.(Framer).ContentType() != "application/json; charset=UTF-8" || tap.Usage().Output != 2 {
		t.Errorf("content type %q, usage %+v", tap.(Framer).ContentType(), tap.Usage())
	}
	// A cut stream's array ends with the error element, and still closes.
	tap = a.Frame(Gemini.NewTap(false))
	out = tap.Feed([]byte(lines[0] + "\r\n\r\n"))
	tail, clean = tap.Close(false, "cut")
	out = append(bytes.Clone(out), tail...)
	if clean || !gjson.ValidBytes(out) || gjson.GetBytes(out, "1.error.message").Str != "cut" {
		t.Errorf("cut array %s", out)
	}
	// Nothing relayed: an empty array.
	if out, _ := Reframe(a.Frame, nil); string(out) != "[]" {
		t.Errorf("empty: %q", out)
	}
	if out, ct := Reframe(a.Frame, []byte(geminiStream)); string(out) != want || ct == "" {
		t.Errorf("Reframe: %q %q", out, ct)
	}
}

// A count body, whole or wrapped, is the generate request it counts.
func TestGeminiCountRequest(t *testing.T) {
	for in, want := range map[string]string{
		`{"contents":[{"parts":[{"text":"a"}]}]}`:                                                          `{"contents":[{"parts":[{"text":"a"}]}]}`,
		`{"generateContentRequest":{"model":"models/g","contents":[{"parts":[{"text":"a"}]}],"tools":[]}}`: `{"contents":[{"parts":[{"text":"a"}]}],"tools":[]}`,
	} {
		got, err := geminiCountRequest([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("%s: %s %v", in, got, err)
		}
	}
}

// FuzzGeminiAddress: any path is an address or an error, never a panic,
// and an address names a model without a slash and an operation.
func FuzzGeminiAddress(f *testing.F) {
	for _, s := range []string{"g:generateContent", "models/g:streamGenerateContent", "g:countTokens", "a:b:c", ":", "", "models/", "%zz:x"} {
		f.Add(s, "alt=sse")
	}
	f.Fuzz(func(t *testing.T, rest, query string) {
		r := httptest.NewRequest("POST", "/v1beta/models/x", nil)
		r.URL.RawQuery = query
		a, err := geminiAddress(r, rest)
		if err != nil {
			var re *RouteError
			var se *ScanError
			if !errors.As(err, &re) && !errors.As(err, &se) {
				t.Fatalf("%q: error of type %T", rest, err)
			}
			return
		}
		if a.Model == "" || strings.Contains(a.Model, "/") || a.Op == 0 || !strings.HasSuffix(rest, ":"+map[Op]string{Generate: "generateContent", CountTokens: "countTokens"}[a.Op]) && !a.Stream {
			t.Fatalf("%q: %+v", rest, a)
		}
	})
}

// A conversation keeps its key as it grows: the model, the system
// instruction, the tools and the first user turn make it.
func TestGeminiAffinity(t *testing.T) {
	key := func(body string) uint64 {
		s, err := Scan([]byte(body), &Gemini.Fields)
		if err != nil {
			t.Fatal(err)
		}
		(&Address{Model: "g"}).Apply(&s)
		k, _ := Gemini.Affinity(&s)
		return uint64(k)
	}
	first := key(`{"systemInstruction":{"parts":[{"text":"terse"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	later := key(`{"systemInstruction":{"parts":[{"text":"terse"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"yo"}]},{"role":"user","parts":[{"text":"more"}]}]}`)
	other := key(`{"systemInstruction":{"parts":[{"text":"verbose"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if first != later || first == other || first == 0 {
		t.Errorf("keys %x %x %x", first, later, other)
	}
}

// A finishReason or usageMetadata member in a function call's arguments
// is the model's, not the stream's: the stream is not done, and its
// usage stays the last the upstream reported.
func TestGeminiTapArgumentMembers(t *testing.T) {
	tap := Gemini.NewTap(false)
	first := geminiStream[:strings.Index(geminiStream, "\r\n\r\n")+4]
	feedAll(tap, first+"data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{\"finishReason\":\"STOP\",\"usageMetadata\":{\"promptTokenCount\":99}}}}],\"role\":\"model\"}}]}\r\n\r\n")
	tail, clean := tap.Close(true, "upstream stream ended before its final event")
	var f sse.Fields
	f.Parse(tail)
	if clean || gjson.GetBytes(f.Data, "error.code").Int() != 502 {
		t.Errorf("a stream cut after a call with a finishReason argument ended with %q, %v", tail, clean)
	}
	if u := tap.Usage(); u.Input != 10 {
		t.Errorf("usage %+v, want the first event's", u)
	}
}

func TestTopMember(t *testing.T) {
	for _, tc := range []struct {
		d, want   string
		found, ok bool
	}{
		{`{"candidates":[{"a":"}\"{"}],"usageMetadata":{"x":1},"modelVersion":"m","responseId":"r"}`, `{"x":1}`, true, true},
		{` { "usageMetadata" : {"x":[1,{"y":"\\"}]} , "n" : -1.5e3 , "t":true } `, `{"x":[1,{"y":"\\"}]}`, true, true},
		{`{"candidates":[{"usageMetadata":{"x":1}}]}`, "", false, true},
		{`{}`, "", false, true},
		{`{"a":"b\"usageMetadata"}`, "", false, true},
		{`{"\u0075sageMetadata":{}}`, "", false, false},
		{`[{"usageMetadata":{}}]`, "", false, false},
		{`{"a":}`, "", false, false},
	} {
		v, found, ok := topMember([]byte(tc.d), "usageMetadata")
		if string(v) != tc.want || found != tc.found || ok != tc.ok {
			t.Errorf("%s: %q %v %v", tc.d, v, found, ok)
		}
	}
}

// FuzzTopMember: what topMember finds in a JSON object is the last
// member of that name, as a parser reads it.
func FuzzTopMember(f *testing.F) {
	for _, s := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"hi \"there\""}]}}],"usageMetadata":{"promptTokenCount":1},"responseId":"r"}`,
		`{"usageMetadata":1,"a":[{"usageMetadata":2}]}`, `{"a":"\\","usageMetadata":null}`, `{}`, `{"a":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		v, found, ok := topMember(d, "usageMetadata")
		if !ok || !gjson.ValidBytes(d) {
			return
		}
		r := gjson.ParseBytes(d)
		if !r.IsObject() {
			t.Fatalf("%q: read as an object", d)
		}
		var last gjson.Result
		r.ForEach(func(k, v gjson.Result) bool {
			if k.Str == "usageMetadata" {
				last = v
			}
			return true
		})
		if found != last.Exists() || string(v) != last.Raw {
			t.Fatalf("%q: %q %v, want %q", d, v, found, last.Raw)
		}
	})
}
