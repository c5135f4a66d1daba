package dialect

import (
	"bufio"
	"net/http"
	"net/textproto"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// sessionOf is what d's Session reads ("" for a protocol without one).
func sessionOf(d *Dialect, h http.Header, body []byte) string {
	if d.Session == nil {
		return ""
	}
	return d.Session(h, body)
}

// byName is the client dialect named name.
func byName(t *testing.T, name string) *Dialect {
	t.Helper()
	for _, d := range All() {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no dialect %q", name)
	return nil
}

// The requests in testdata/session are the real clients' (their
// versions in each file's comment): what each names as its session.
func TestSessionClients(t *testing.T) {
	files, err := filepath.Glob("testdata/session/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string][]byte{}
			for _, f := range a.Files {
				sec[f.Name] = f.Data
			}
			d := byName(t, strings.TrimSpace(string(sec["dialect"])))
			h, err := textproto.NewReader(bufio.NewReader(strings.NewReader(string(sec["headers"]) + "\r\n"))).ReadMIMEHeader()
			if err != nil {
				t.Fatal(err)
			}
			body := sec["request.json"]
			if _, err := Scan(body, &d.Fields); err != nil {
				t.Fatalf("the request does not scan: %v", err)
			}
			if got, want := sessionOf(d, http.Header(h), body), strings.TrimSpace(string(sec["want"])); got != want {
				t.Errorf("session %q, want %q", got, want)
			}
		})
	}
}

func TestSession(t *testing.T) {
	long := strings.Repeat("k", MaxSessionID+1)
	tests := []struct {
		name   string
		d      *Dialect
		header [][2]string
		body   string
		want   string
	}{
		{"messages: header outranks metadata", Messages, [][2]string{{"X-Claude-Code-Session-Id", "h-1"}},
			`{"metadata":{"user_id":"{\"session_id\":\"m-1\"}"}}`, "h-1"},
		{"messages: JSON user_id without a session", Messages, nil, `{"metadata":{"user_id":"{\"device_id\":\"d\",\"account_uuid\":\"a\"}"}}`, ""},
		{"messages: JSON user_id, session not a string", Messages, nil, `{"metadata":{"user_id":"{\"session_id\":7}"}}`, ""},
		{"messages: user_id not a string", Messages, nil, `{"metadata":{"user_id":{"session_id":"s"}}}`, ""},
		{"messages: a user named like a session", Messages, nil, `{"metadata":{"user_id":"alice_session_1"}}`, ""},
		{"messages: legacy without an account", Messages, nil, `{"metadata":{"user_id":"user_alice_session_1"}}`, ""},
		{"messages: legacy, empty session", Messages, nil, `{"metadata":{"user_id":"user_d_account__session_"}}`, ""},
		{"messages: session_id elsewhere", Messages, nil, `{"messages":[{"role":"user","content":"session_id user_id"}]}`, ""},
		{"messages: escaped member name", Messages, nil, `{"metadata":{"user\u005fid":"user_d_account_a_session_s-9"}}`, "s-9"},
		{"messages: no metadata", Messages, nil, `{"model":"m","messages":[]}`, ""},

		{"responses: body outranks header", Responses, [][2]string{{"session_id", "h-2"}}, `{"prompt_cache_key":"k-2"}`, "k-2"},
		{"responses: empty key, header", Responses, [][2]string{{"session_id", "h-2"}}, `{"prompt_cache_key":""}`, "h-2"},
		{"responses: key not a string", Responses, nil, `{"prompt_cache_key":12}`, ""},
		{"responses: user is no session", Responses, nil, `{"user":"u","input":"prompt_cache_key"}`, ""},
		{"responses: conversation_id header is no session", Responses, [][2]string{{"conversation_id", "c"}}, `{}`, ""},

		{"chat: session header of another protocol", Chat, [][2]string{{"session_id", "h"}}, `{"messages":[]}`, ""},
		{"chat: long key hashed", Chat, nil, `{"prompt_cache_key":"` + long + `"}`, SessionID(long)},

		{"gemini: privileged user id is no session", Gemini, [][2]string{{"X-Gemini-Api-Privileged-User-Id", "u"}}, `{"contents":[]}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, kv := range tc.header {
				h.Add(kv[0], kv[1])
			}
			if got := sessionOf(tc.d, h, []byte(tc.body)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSessionID(t *testing.T) {
	max := strings.Repeat("a", MaxSessionID)
	tests := []struct {
		in     string
		hashed bool
	}{
		{"", false},
		{"0199a3c4-7d2e-7b61-9f0a-3c5d7e9f1a2b", false},
		{"with space ~!", false},
		{max, false},
		{max + "a", true},
		{"caf\u00e9", true},
		{"tab\there", true},
		{"line\nbreak", true},
		{"del\x7f", true},
		{"\xff\xfe", true},
	}
	for _, tc := range tests {
		got := SessionID(tc.in)
		switch {
		case !tc.hashed && got != tc.in:
			t.Errorf("SessionID(%q) = %q, want it as it is", tc.in, got)
		case tc.hashed && (got == tc.in || !strings.HasPrefix(got, "sha256:") || len(got) != len("sha256:")+32):
			t.Errorf("SessionID(%q) = %q, want a digest", tc.in, got)
		case tc.hashed && got != SessionID(tc.in):
			t.Errorf("SessionID(%q) is not stable", tc.in)
		}
	}
	if SessionID(max+"a") == SessionID(max+"b") {
		t.Error("two long ids share a digest")
	}
}

// FuzzSession: no body or header makes a Session panic, and what it
// returns is within the bound, printable ASCII.
func FuzzSession(f *testing.F) {
	files, _ := filepath.Glob("testdata/session/*.txtar")
	for _, file := range files {
		if a, err := txtar.ParseFile(file); err == nil {
			for _, s := range a.Files {
				if s.Name == "request.json" {
					f.Add(string(s.Data), "")
				}
			}
		}
	}
	f.Add(`{"metadata":{"user_id":"{\"session_id\":\"\u00e9\"}"}}`, "")
	f.Add(`{"metadata":{"user_id":"user__account__session_`+strings.Repeat("x", 200)+`"}}`, "\x00")
	f.Add(`{"prompt_cache_key":"\ud800"}`, "s")
	f.Fuzz(func(t *testing.T, body, header string) {
		h := http.Header{"X-Claude-Code-Session-Id": {header}, "Session_id": {header}}
		for _, d := range All() {
			got := sessionOf(d, h, []byte(body))
			if len(got) > MaxSessionID || !printableASCII(got) {
				t.Fatalf("%s: session %q", d.Name, got)
			}
		}
	})
}

func BenchmarkSession(b *testing.B) {
	a, err := txtar.ParseFile("testdata/session/claude_code_2.1.197.txtar")
	if err != nil {
		b.Fatal(err)
	}
	var body []byte
	for _, f := range a.Files {
		if f.Name == "request.json" {
			body = f.Data
		}
	}
	// A long conversation before the metadata, without the header: the
	// body is read to its end.
	turns := strings.Repeat(`{"role":"user","content":"`+strings.Repeat("x", 1000)+`"},`, 100)
	body = []byte(strings.Replace(string(body), `"messages":[`, `"messages":[`+turns, 1))
	h := http.Header{}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if messagesSession(h, body) == "" {
			b.Fatal("no session")
		}
	}
}
