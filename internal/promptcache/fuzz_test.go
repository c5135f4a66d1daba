package promptcache

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// FuzzPlaceRaw checks that the raw applier's output is JSON with the
// count of marks it reports added, and holds it to the typed one: with
// every spot long enough (their size estimates differ: an image counts
// as its bytes in one and as a typical image in the other), both mark the
// same blocks.
func FuzzPlaceRaw(f *testing.F) {
	f.Add(req(1100, 600, "u:50"), int64(0))
	f.Add(req(0, 0, "u:1100", "a:100", "t:600", "i", "th", "e"), int64(0))
	f.Add(req(0, 1500, "raw:{\"role\":\"user\",\"content\":[]}", "u:10"), int64(2048))
	f.Add([]byte(`{"system":[],"messages":[{"role":"user","content":{"type":"x"}}],"tools":{}}`), int64(1))
	f.Fuzz(func(t *testing.T, body []byte, min int64) {
		var v map[string]any
		if json.Unmarshal(body, &v) != nil {
			return
		}
		o := Options{MinTokens: min % 5000}
		out, n, err := PlaceRaw(body, o)
		if err != nil {
			return
		}
		if out == nil {
			if n != 0 {
				t.Fatalf("no body but %d added", n)
			}
			out = body
		}
		if !json.Valid(out) {
			t.Fatalf("output is not JSON: %s", out)
		}
		if got := countMarks(out) - countMarks(body); got != n {
			t.Fatalf("reported %d added, found %d", n, got)
		}
		var typed anthropic.MessagesRequest
		if jsonx.Unmarshal(body, &typed) != nil {
			return
		}
		if countMarks(body) > 0 {
			return // the typed applier may add to a client's marks; the raw one never does
		}
		o = Options{MinTokens: 1, OnlyIfNone: true}
		if out, n, err = PlaceRaw(body, o); err != nil {
			t.Fatal(err)
		}
		if out == nil {
			out = body
		}
		if m := Place(&typed, o); m != n {
			t.Fatalf("typed added %d, raw %d", m, n)
		}
		tb, err := jsonx.Marshal(&typed)
		if err != nil {
			return
		}
		var fromRaw anthropic.MessagesRequest
		if err := jsonx.Unmarshal(out, &fromRaw); err != nil {
			t.Fatalf("raw output does not decode: %v", err)
		}
		if a, b := fmt.Sprint(marksOf(&typed)), fmt.Sprint(marksOf(&fromRaw)); a != b {
			t.Fatalf("typed marks %s, raw %s\n%s\n%s", a, b, tb, out)
		}
	})
}

func marksOf(r *anthropic.MessagesRequest) []string {
	var out []string
	for i, tl := range r.Tools {
		if len(tl.CacheControl) > 0 {
			out = append(out, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, bl := range r.System.Blocks {
		if len(bl.CacheControl) > 0 {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, m := range r.Messages {
		for k, bl := range m.Content.Blocks {
			if len(bl.CacheControl) > 0 {
				out = append(out, fmt.Sprintf("m%d[%d]", i, k))
			}
		}
	}
	return out
}
