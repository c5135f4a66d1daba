package promptcache

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// req builds a Messages request body. tools and system are sizes in
// tokens (0: none); turns are the conversation's messages, each "u:N",
// "a:N" (text of N tokens), "t:N" (a user turn of tool results), "i" (a
// user turn ending with an image), "th" (an assistant turn of thinking
// only) or "e" (a user turn whose only text is empty).
func req(tools, system int, turns ...string) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"m","max_tokens":10`)
	if tools > 0 {
		b.WriteString(`,"tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"b","description":"` + text(tools) + `","input_schema":{"type":"object"}}]`)
	}
	if system > 0 {
		b.WriteString(`,"system":"` + text(system) + `"`)
	}
	b.WriteString(`,"messages":[`)
	for i, t := range turns {
		if i > 0 {
			b.WriteByte(',')
		}
		kind, n, _ := strings.Cut(t, ":")
		var size int
		fmt.Sscan(n, &size)
		switch kind {
		case "u":
			b.WriteString(`{"role":"user","content":"` + text(size) + `"}`)
		case "a":
			b.WriteString(`{"role":"assistant","content":[{"type":"text","text":"` + text(size) + `"},{"type":"tool_use","id":"t1","name":"a","input":{}}]}`)
		case "t":
			b.WriteString(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"` + text(size) + `"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"x"}]}]}`)
		case "i":
			b.WriteString(`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}`)
		case "th":
			b.WriteString(`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"}]}`)
		case "e":
			b.WriteString(`{"role":"user","content":[{"type":"text","text":""}]}`)
		case "raw":
			b.WriteString(n)
		}
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// text is about n tokens of text.
func text(n int) string { return strings.Repeat("word ", n*4/5) }

// marks lists where a body's cache_control marks are: "tools", "system",
// "m<i>" for message i (with the block index), and "top".
func marks(t *testing.T, body []byte) []string {
	t.Helper()
	var r anthropic.MessagesRequest
	if err := jsonx.Unmarshal(body, &r); err != nil {
		t.Fatalf("body does not decode: %v\n%s", err, body)
	}
	if len(r.CacheControl) > 0 {
		return append([]string{"top"}, marksOf(&r)...)
	}
	return marksOf(&r)
}

func TestPlace(t *testing.T) {
	long := req(0, 0, "u:600", "a:300", "t:600", "a:300", "t:600")
	cases := []struct {
		name string
		body []byte
		o    Options
		want []string // marks after placement
	}{
		{"too short to cache", req(100, 200, "u:300"), Options{}, nil},
		{"tools only", req(1500, 0, "u:10"), Options{}, []string{"tools[1]", "m0[0]"}},
		{"system only", req(0, 1500, "u:10"), Options{}, []string{"system[0]", "m0[0]"}},
		{"tools too short alone, tools and system long enough", req(300, 900, "u:10"), Options{}, []string{"system[0]", "m0[0]"}},
		{"first turn", req(1100, 600, "u:50"), Options{}, []string{"tools[1]", "system[0]", "m0[0]"}},
		{"short history: the pair", req(0, 0, "u:1100", "a:100", "u:200"), Options{}, []string{"m0[0]", "m2[0]"}},
		{"the previous turn below the minimum", req(0, 0, "u:100", "a:100", "u:900"), Options{}, []string{"m2[0]"}},
		{"long history: rolling pair on tool results", long, Options{}, []string{"m2[1]", "m4[1]"}},
		{"all four", req(1200, 1200, "u:600", "a:300", "t:600"), Options{}, []string{"tools[1]", "system[0]", "m0[0]", "m2[1]"}},
		{"image last in the turn", req(0, 1500, "u:10", "a:10", "i"), Options{}, []string{"system[0]", "m0[0]", "m2[1]"}},
		{"thinking turns and an empty text are skipped", req(0, 1500, "u:10", "th", "e"), Options{}, []string{"system[0]", "m0[0]"}},
		{"a higher model minimum", req(0, 2000, "u:1000", "a:10", "u:10"), Options{MinTokens: 4096}, nil},
		{"a higher minimum met by the latest turn only", req(0, 2000, "u:1000", "a:10", "u:2000"), Options{MinTokens: 4096}, []string{"m2[0]"}},
		{"one hour", req(0, 1500, "u:10"), Options{TTL: TTL1h}, []string{"system[0]", "m0[0]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, lane := range []string{"typed", "raw"} {
				out, n := placeBoth(t, lane, c.body, c.o)
				got := marks(t, out)
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("%s: marks %v, want %v", lane, got, c.want)
				}
				if n != len(c.want) {
					t.Errorf("%s: reported %d added, want %d", lane, n, len(c.want))
				}
				if c.o.TTL == TTL1h && n > 0 && !strings.Contains(string(out), `"ttl":"1h"`) {
					t.Errorf("%s: no 1h mark in %s", lane, out)
				}
			}
		})
	}
}

// placeBoth places marks with the typed or the raw applier.
func placeBoth(t *testing.T, lane string, body []byte, o Options) ([]byte, int) {
	t.Helper()
	if lane == "raw" {
		out, n, err := PlaceRaw(body, o)
		if err != nil {
			t.Fatal(err)
		}
		if out == nil {
			out = body
		}
		if !json.Valid(out) {
			t.Fatalf("raw output is not JSON: %s", out)
		}
		return out, n
	}
	var r anthropic.MessagesRequest
	if err := jsonx.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	n := Place(&r, o)
	out, err := jsonx.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return out, n
}

// With marks of its own, a client keeps them on the pass-through lane;
// a translated request gets what is left of the four.
func TestPlaceWithClientMarks(t *testing.T) {
	clientSys := `{"model":"m","max_tokens":1,"system":[{"type":"text","text":"` + text(1500) + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"` + text(900) + `"},{"role":"assistant","content":"ok"},{"role":"user","content":"` + text(900) + `"}]}`
	cases := []struct {
		name      string
		body      string
		typedWant []string
	}{
		{"one client mark", clientSys, []string{"system[0]", "m0[0]", "m2[0]"}},
		{"four client marks: none added", `{"model":"m","max_tokens":1,"cache_control":{"type":"ephemeral"},"system":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"` + text(3000) + `","cache_control":{"type":"ephemeral"}}]}]}`,
			[]string{"top", "system[0]", "system[1]", "m0[0]"}},
		{"the client's mark on the latest turn is not doubled", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"` + text(1200) + `"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"` + text(900) + `","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`,
			[]string{"m0[0]", "m2[0]"}},
		{"mixed client TTLs: none added", `{"model":"m","max_tokens":1,"system":[{"type":"text","text":"` + text(1500) + `","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"text","text":"` + text(1500) + `","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":"ok"},{"role":"user","content":"` + text(1500) + `"}]}`,
			[]string{"system[0]", "m0[0]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, n, err := PlaceRaw([]byte(c.body), Options{})
			if err != nil || out != nil || n != 0 {
				t.Errorf("raw: added %d (%v): %s", n, err, out)
			}
			typed, n := placeBoth(t, "typed", []byte(c.body), Options{})
			if got := marks(t, typed); fmt.Sprint(got) != fmt.Sprint(c.typedWant) {
				t.Errorf("typed: marks %v, want %v", got, c.typedWant)
			}
			if strings.Contains(c.name, "1h") || strings.Contains(c.body, `"ttl":"1h"`) && !strings.Contains(c.name, "mixed") {
				if strings.Count(string(typed), `"ttl":"1h"`) != len(c.typedWant) {
					t.Errorf("typed: added marks must take the client's TTL: %s", typed)
				}
			}
			if added := len(c.typedWant) - countMarks([]byte(c.body)); n != added {
				t.Errorf("typed: reported %d added, want %d", n, added)
			}
			if countMarks(typed) > MaxBreakpoints {
				t.Errorf("more than %d marks", MaxBreakpoints)
			}
		})
	}
}

// The raw applier changes nothing but the marks: every other byte stays.
func TestPlaceRawKeepsBytes(t *testing.T) {
	body := []byte("{\"model\" : \"m\",\n \"max_tokens\":1, \"unknown\": {\"x\": [1,2]},\n \"system\": [ {\"type\":\"text\", \"text\":\"" + text(1500) + "\" } ],\n \"messages\": [ {\"role\":\"user\",\"content\":\"hi \\\"there\\\"\"} ] }")
	out, n, err := PlaceRaw(body, Options{})
	if err != nil || n != 2 {
		t.Fatalf("added %d, %v", n, err)
	}
	want := strings.Replace(string(body), `" } ]`, `" ,"cache_control":{"type":"ephemeral"}} ]`, 1)
	want = strings.Replace(want, `"content":"hi \"there\""`, `"content":[{"type":"text","text":"hi \"there\"","cache_control":{"type":"ephemeral"}}]`, 1)
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestCountMarks(t *testing.T) {
	for body, want := range map[string]int{
		`{"a":"cache_control"}`:                         0,
		`{"cache_control" : {}}`:                        1,
		`{"t":"say \"cache_control\": x"}`:              0,
		`[{"cache_control":{}},{"cache_control":null}]`: 2,
	} {
		if got := countMarks([]byte(body)); got != want {
			t.Errorf("%s: %d, want %d", body, got, want)
		}
	}
}

// BenchmarkPlace places breakpoints in a decoded agent request of about
// 100 KB (60 turns), typed as on the translation lane, and in its bytes
// as on the pass-through lane.
func BenchmarkPlace(b *testing.B) {
	turns := []string{"u:100"}
	for range 30 {
		turns = append(turns, "a:60", "t:750")
	}
	body := req(1500, 2500, turns...)
	b.Run("typed", func(b *testing.B) {
		var r anthropic.MessagesRequest
		if err := jsonx.Unmarshal(body, &r); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			for i := range r.Messages { // undo the last round's marks
				for k := range r.Messages[i].Content.Blocks {
					r.Messages[i].Content.Blocks[k].CacheControl = nil
				}
			}
			r.System.Blocks[0].CacheControl, r.Tools[1].CacheControl = nil, nil
			if Place(&r, Options{}) != 4 {
				b.Fatal("not 4")
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, n, err := PlaceRaw(body, Options{}); err != nil || n != 4 {
				b.Fatal(n, err)
			}
		}
	})
}
