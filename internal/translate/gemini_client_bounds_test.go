package translate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// lookCounter is a context whose Err is nil for its first looks, then
// Canceled; it counts the looks.
type lookCounter struct {
	context.Context
	left, looks int
}

func (c *lookCounter) Err() error {
	c.looks++
	if c.left--; c.left < 0 {
		return context.Canceled
	}
	return nil
}

// manyCalls is a conversation whose model turn makes n calls of one
// function without ids and whose user turn answers them all without ids:
// each response goes to the first call not yet answered.
func manyCalls(n int) []gemini.Content {
	model := gemini.Content{Role: gemini.RoleModel}
	user := gemini.Content{Role: gemini.RoleUser}
	for range n {
		model.Parts = append(model.Parts, gemini.Part{FunctionCall: &gemini.FunctionCall{Name: "f"}})
		user.Parts = append(user.Parts, gemini.Part{FunctionResponse: &gemini.FunctionResponse{Name: "f"}})
	}
	return []gemini.Content{{Role: gemini.RoleUser, Parts: []gemini.Part{{Text: "go"}}}, model, user}
}

// manySignatures is a model turn of n parts with distinct signatures.
func manySignatures(n int) []gemini.Content {
	model := gemini.Content{Role: gemini.RoleModel}
	for i := range n {
		model.Parts = append(model.Parts, gemini.Part{Text: "t", ThoughtSignature: fmt.Sprintf("sig%d", i)})
	}
	return []gemini.Content{{Role: gemini.RoleUser, Parts: []gemini.Part{{Text: "go"}}}, model}
}

// Reading the turns is linear in them: doubling the calls (or the
// signed parts) doubles the work. Pairing each response by a scan of the
// calls made the work grow with the square of the calls.
func TestGeminiTurnsLinear(t *testing.T) {
	for name, contents := range map[string]func(int) []gemini.Content{"calls": manyCalls, "signatures": manySignatures} {
		var work [3]int
		for i, n := range []int{1000, 2000, 4000} {
			p := &Plan{signer: NewSigner([]byte("k"))}
			turns, err := p.geminiTurns(t.Context(), contents(n), "u")
			if err != nil {
				t.Fatal(err)
			}
			if name == "calls" && turns[2].items[n-1].id != fmt.Sprintf("call_1_%d", n-1) {
				t.Fatalf("%s: the last response went to %s", name, turns[2].items[n-1].id)
			}
			work[i] = p.work
		}
		if d1, d2 := work[1]-work[0], work[2]-work[1]; d1 <= 0 || float64(d2)/float64(d1) > 2.2 {
			t.Errorf("%s: work %v for 1000, 2000 and 4000", name, work)
		}
		if work[2] > 4*3*4000 {
			t.Errorf("%s: work %d for 4000", name, work[2])
		}
	}
}

// A function response goes to the call of the model turn before it
// that has its id, or else to the first call not yet answered that has
// its name.
func TestGeminiResponsePairing(t *testing.T) {
	for _, tc := range []struct {
		name        string
		calls       [][2]string // id, name
		responses   [][2]string
		want        []string // the ids the responses went to
		unmatchedAt int      // the response refused, or -1
	}{
		{"by id", [][2]string{{"a", "f"}, {"b", "f"}}, [][2]string{{"b", "f"}, {"a", "f"}}, []string{"b", "a"}, -1},
		{"by name in order", [][2]string{{"", "f"}, {"", "g"}, {"", "f"}}, [][2]string{{"", "f"}, {"", "f"}, {"", "g"}}, []string{"call_1_0", "call_1_2", "call_1_1"}, -1},
		{"an unknown id goes by name", [][2]string{{"a", "f"}, {"b", "f"}}, [][2]string{{"zz", "f"}, {"zz", "f"}}, []string{"a", "b"}, -1},
		{"an id answered already goes by name", [][2]string{{"a", "f"}, {"b", "f"}}, [][2]string{{"a", "f"}, {"a", "f"}}, []string{"a", "b"}, -1},
		{"by name skips the calls answered by id", [][2]string{{"a", "f"}, {"b", "f"}, {"c", "f"}}, [][2]string{{"b", "f"}, {"", "f"}, {"", "f"}}, []string{"b", "a", "c"}, -1},
		{"a repeated id goes in order", [][2]string{{"x", "f"}, {"x", "g"}}, [][2]string{{"x", "h"}, {"x", "h"}}, []string{"x", "x"}, -1},
		{"the id wins over the name", [][2]string{{"a", "f"}, {"b", "g"}}, [][2]string{{"b", "f"}, {"", "f"}}, []string{"b", "a"}, -1},
		{"nothing left of the name", [][2]string{{"a", "f"}}, [][2]string{{"", "f"}, {"", "f"}}, []string{"a"}, 1},
		{"an id answered by name", [][2]string{{"a", "f"}, {"b", "f"}}, [][2]string{{"", "f"}, {"a", "g"}}, []string{"a"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, user := gemini.Content{Role: gemini.RoleModel}, gemini.Content{Role: gemini.RoleUser}
			for _, c := range tc.calls {
				model.Parts = append(model.Parts, gemini.Part{FunctionCall: &gemini.FunctionCall{ID: c[0], Name: c[1]}})
			}
			for _, r := range tc.responses {
				user.Parts = append(user.Parts, gemini.Part{FunctionResponse: &gemini.FunctionResponse{ID: r[0], Name: r[1]}})
			}
			turns, err := (&Plan{}).geminiTurns(t.Context(), []gemini.Content{{Parts: []gemini.Part{{Text: "go"}}}, model, user}, "u")
			if tc.unmatchedAt >= 0 {
				var re *RequestError
				if want := fmt.Sprintf("contents[2].parts[%d].functionResponse", tc.unmatchedAt); !errors.As(err, &re) || re.Param != want {
					t.Fatalf("got %v, want a refusal at %s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range turns[2].items {
				got = append(got, it.id)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A translation stops with the context's error when the request's
// context ended before it, or while it reads a long conversation, after
// reading at most ctxStride more parts.
func TestGeminiTurnsContextEnded(t *testing.T) {
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	body := []byte(`{"contents":[{"parts":[{"text":"hi"}]}]}`)
	for name, translate := range geminiRequestPairs {
		if _, _, err := translate(ended, body, Target{Model: "m"}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want %v", name, err, context.Canceled)
		}
	}
	for name, contents := range map[string][]gemini.Content{"calls": manyCalls(5000), "signatures": manySignatures(10000)} {
		ctx := &lookCounter{Context: t.Context(), left: 3}
		p := &Plan{}
		if _, err := p.geminiTurns(ctx, contents, "u"); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want %v", name, err, context.Canceled)
		}
		if ctx.looks != 4 || p.work > 4*ctxStride {
			t.Errorf("%s: stopped after %d looks and %d items", name, ctx.looks, p.work)
		}
	}
}

// wideSchema is an object schema of n properties, each named in
// propertyOrdering (in reverse) and each with an example.
func wideSchema(n int) []byte {
	var props, order []string
	for i := range n {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"STRING","example":"a"}`, i))
		order = append(order, fmt.Sprintf(`"p%d"`, n-1-i))
	}
	return []byte(`{"type":"OBJECT","properties":{` + strings.Join(props, ",") + `},"propertyOrdering":[` + strings.Join(order, ",") + `]}`)
}

// A schema's properties and their propertyOrdering are read in work
// linear in them, and the conversion looks at the context as it reads
// them.
func TestJSONSchemaOfLinear(t *testing.T) {
	var work [3]int
	for i, n := range []int{1000, 2000, 4000} {
		p := &Plan{}
		out, err := p.jsonSchemaOf(t.Context(), wideSchema(n), "parameters")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string","examples":["a"]},`, n-1); !strings.HasPrefix(string(out), want) {
			t.Fatalf("got %.200s", out)
		}
		work[i] = p.work
	}
	if d1, d2 := work[1]-work[0], work[2]-work[1]; d1 <= 0 || float64(d2)/float64(d1) > 2.2 || work[2] > 3*4000 {
		t.Errorf("work %v for 1000, 2000 and 4000 properties", work)
	}
	ctx := &lookCounter{Context: t.Context(), left: 2}
	p := &Plan{}
	if _, err := p.jsonSchemaOf(ctx, wideSchema(20000), "parameters"); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want %v", err, context.Canceled)
	}
	if p.work > 3*ctxStride {
		t.Errorf("stopped after %d looks and %d items", ctx.looks, p.work)
	}
}

// Many model turns in a row make one Chat assistant message, built in
// memory linear in their text: merged turn by turn, the text was copied
// again at every turn.
func TestGeminiConsecutiveModelTurns(t *testing.T) {
	const n, size = 500, 2 << 10
	text := strings.Repeat("x", size)
	var b strings.Builder
	b.WriteString(`{"contents":[{"role":"user","parts":[{"text":"q"}]}`)
	for range n {
		b.WriteString(`,{"role":"model","parts":[{"text":"` + text + `"}]}`)
	}
	b.WriteString(`,{"role":"user","parts":[{"text":"again"}]}]}`)
	body := []byte(b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, _, err := GeminiBodyToChat(t.Context(), body, Target{Model: "m"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16*uint64(len(body)) {
		t.Errorf("allocated %d MB for a %d KB body", n>>20, len(body)>>10)
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := jsonx.Unmarshal(out, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 3 || req.Messages[1].Role != "assistant" || req.Messages[1].Content != strings.Repeat(text, n) {
		t.Errorf("got %d messages", len(req.Messages))
	}
}

// Many function declarations, each allowed by name, are read in time
// linear in them; a name no function has is refused with its place.
func TestGeminiAllowedFunctionNames(t *testing.T) {
	var funcs, names []string
	for i := range 3000 {
		funcs = append(funcs, fmt.Sprintf(`{"name":"f%d"}`, i))
		names = append(names, fmt.Sprintf(`"f%d"`, i), fmt.Sprintf(`"f%d"`, i))
	}
	body := func(names []string) []byte {
		return []byte(`{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[` + strings.Join(funcs, ",") +
			`]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":[` + strings.Join(names, ",") + `]}}}`)
	}
	out, _, err := GeminiBodyToChat(t.Context(), body(names), Target{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), `"type":"function"`); n != 3000 {
		t.Errorf("%d tools, want 3000", n)
	}
	_, _, err = GeminiBodyToChat(t.Context(), body(append(names[:10:10], `"nope"`)), Target{Model: "m"})
	var re *RequestError
	if !errors.As(err, &re) || re.Param != "toolConfig.functionCallingConfig.allowedFunctionNames[10]" {
		t.Errorf("got %v", err)
	}
}
