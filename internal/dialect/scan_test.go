package dialect

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestScanBody(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    want
		wantErr string
	}{
		{name: "anthropic", body: `{"model":"m1","max_tokens":5,"messages":[{"role":"user","content":"x"}],"stream":true}`,
			want: want{model: []byte("m1"), hasModel: true, stream: true, maxTokens: true, messages: 1}},
		{name: "openai with options", body: ` { "messages" : [ {} ] , "stream_options": {"include_usage": true}, "model": "gpt" } `,
			want: want{model: []byte("gpt"), hasModel: true, messages: 1, includeUsage: true, streamOptionsObject: true}},
		{name: "include_usage false", body: `{"model":"m","messages":[1],"stream_options":{"include_usage":false}}`,
			want: want{model: []byte("m"), hasModel: true, messages: 1, streamOptionsObject: true}},
		{name: "escaped model", body: `{"model":"a\/b\u00e9","messages":[]}`,
			want: want{model: []byte("a/bé"), hasModel: true, messages: 0}},
		{name: "null stream and max_tokens", body: `{"model":"m","stream":null,"max_tokens":null}`,
			want: want{model: []byte("m"), hasModel: true, messages: -1}},
		{name: "nested duplicates allowed", body: `{"model":"m","metadata":{"a":1,"a":2}}`,
			want: want{model: []byte("m"), hasModel: true, messages: -1}},
		{name: "top-level duplicate", body: `{"model":"m","x":1,"x":2}`, wantErr: `duplicate top-level field "x"`},
		{name: "not an object", body: `"str"`, wantErr: "JSON object"},
		{name: "trailing comma", body: `{"model":"m",}`, wantErr: "line 1, column 13"},
		{name: "second value", body: `{} {}`, wantErr: "malformed JSON"},
		{name: "bad nested value", body: `{"model":"m","messages":[tru]}`, wantErr: "malformed JSON"},
		{name: "truncated", body: `{"model":"m","messages":[`, wantErr: "at line 1, column 26 (byte 25): unexpected end of input"},
		{name: "messages not an array", body: `{"messages":{}}`, wantErr: "messages: expected an array"},
		{name: "model not a string", body: `{"model":null}`, wantErr: "model: expected a string"},
		{name: "stream not a bool", body: `{"stream":1}`, wantErr: "stream: expected a boolean"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Messages
			if strings.HasPrefix(tc.name, "openai") || strings.Contains(tc.body, "stream_options") {
				d = Chat
			}
			s, err := Scan([]byte(tc.body), &d.Fields)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Scan error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			if s.HasModel {
				if q := tc.body[s.ModelStart:s.ModelEnd]; gjson.Parse(q).String() != string(tc.want.model) {
					t.Errorf("model offsets cover %q, want the model value", q)
				}
			}
			opts := s.Kept(0)
			got := want{model: s.Model, hasModel: s.HasModel, stream: s.Stream, maxTokens: s.HasMaxOutput, messages: s.Conversation,
				includeUsage: d == Chat && includeUsage(opts), streamOptionsObject: d == Chat && len(opts) > 0 && opts[0] == '{'}
			if string(got.model) != string(tc.want.model) || got.hasModel != tc.want.hasModel || got.stream != tc.want.stream ||
				got.maxTokens != tc.want.maxTokens || got.messages != tc.want.messages || got.includeUsage != tc.want.includeUsage ||
				got.streamOptionsObject != tc.want.streamOptionsObject {
				t.Errorf("Scan = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// want is what a scan of either dialect's body reads.
type want struct {
	model                                                          []byte
	hasModel, stream, maxTokens, includeUsage, streamOptionsObject bool
	messages                                                       int
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"x"}]}`,
		`{"model":"a\"b","stream":true,"stream_options":{"include_usage":true}}`,
		`{"x":[1,{"y":null}],"model":"\u00e9"}`, `{}`, `[]`, `{"model":"m","model":"n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := Scan(body, &Chat.Fields)
		if err != nil {
			if _, ok := err.(*ScanError); !ok {
				t.Fatalf("Scan returned a non-client error: %v", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("Scan accepted invalid JSON %q", body)
		}
		if !s.HasModel {
			return
		}
		// Splicing a new model in must give valid JSON carrying that model.
		out := append(append(append([]byte{}, body[:s.ModelStart]...), `"new-model"`...), body[s.ModelEnd:]...)
		if !json.Valid(out) {
			t.Fatalf("splice of %q gave invalid JSON %q", body, out)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil || string(m["model"]) != `"new-model"` {
			t.Fatalf("splice of %q gave model %s (%v)", body, m["model"], err)
		}
	})
}

// manyNames is a body with n distinct top-level names after the routing
// fields.
func manyNames(n int) []byte {
	b := []byte(`{"model":"m","messages":[1]`)
	for i := range n {
		b = fmt.Appendf(b, `,"f%d":0`, i)
	}
	return append(b, '}')
}

// TestScanManyNames: the duplicate check is linear. 160,000 distinct names
// once cost 27 s of CPU; a duplicate among them is still found.
func TestScanManyNames(t *testing.T) {
	body := manyNames(160_000)
	if _, err := Scan(body, &Chat.Fields); err != nil {
		t.Fatal(err)
	}
	dup := append(body[:len(body)-1:len(body)-1], `,"f77777":1}`...)
	if _, err := Scan(dup, &Chat.Fields); err == nil || !strings.Contains(err.Error(), `duplicate top-level field "f77777"`) {
		t.Fatalf("duplicate not found: %v", err)
	}
	dup = append(body[:len(body)-1:len(body)-1], `,"model":"other"}`...)
	if _, err := Scan(dup, &Chat.Fields); err == nil || !strings.Contains(err.Error(), `"model"`) {
		t.Fatalf("duplicate model not found: %v", err)
	}
}

// BenchmarkScanManyNames reports the cost per name: flat as n grows.
func BenchmarkScanManyNames(b *testing.B) {
	for _, n := range []int{1_000, 40_000, 160_000} {
		body := manyNames(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := Scan(body, &Chat.Fields); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
