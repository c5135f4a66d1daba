package translate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/sse"
)

// events splits a client stream into its events.
func events(b []byte) []sse.Fields {
	var out []sse.Fields
	for len(b) > 0 {
		n := sse.Split(b)
		if n == 0 {
			break
		}
		var f sse.Fields
		f.Parse(b[:n])
		f.Name = append([]byte(nil), f.Name...)
		f.Data = append([]byte(nil), f.Data...)
		out = append(out, f)
		b = b[n:]
	}
	return out
}

// validData checks that every event's data is valid JSON (or [DONE]).
func validData(b []byte) error {
	for i, e := range events(b) {
		if e.Data != nil && string(e.Data) != "[DONE]" && !jsontext.Value(e.Data).IsValid() {
			return fmt.Errorf("event %d carries invalid JSON: %q", i, e.Data)
		}
	}
	return nil
}

// anthropicGrammar checks a client stream against TRANSLATION.md §3.6:
//
//	S := message_start ping* B* message_delta message_stop | message_start ping* B* error | error
//	B := content_block_start(i) delta(i)* content_block_stop(i), i = 0, 1, 2, … in order
//
// plus: every event named as its data.type, at most one block open, tool
// input starts as {} and arrives through input_json_delta, deltas of the
// right type for their block.
func anthropicGrammar(b []byte) error {
	if err := validData(b); err != nil {
		return err
	}
	evs := events(b)
	if len(evs) == 0 {
		return fmt.Errorf("empty stream")
	}
	if string(evs[0].Name) == "error" {
		if len(evs) != 1 {
			return fmt.Errorf("events after a leading error")
		}
		return nil
	}
	if string(evs[0].Name) != "message_start" {
		return fmt.Errorf("first event %q, want message_start", evs[0].Name)
	}
	open, next := -1, 0
	var openType string
	for i, e := range evs {
		name := string(e.Name)
		if typ := gjson.GetBytes(e.Data, "type").String(); typ != name {
			return fmt.Errorf("event %d named %q carries type %q", i, name, typ)
		}
		last := i == len(evs)-1
		switch name {
		case "message_start":
			if i != 0 {
				return fmt.Errorf("message_start at %d", i)
			}
		case "ping":
		case "content_block_start":
			idx := int(gjson.GetBytes(e.Data, "index").Int())
			if open >= 0 {
				return fmt.Errorf("block %d started while %d is open", idx, open)
			}
			if idx != next {
				return fmt.Errorf("block index %d, want %d", idx, next)
			}
			open, next = idx, next+1
			openType = gjson.GetBytes(e.Data, "content_block.type").String()
			if openType == "tool_use" && gjson.GetBytes(e.Data, "content_block.input").Raw != "{}" {
				return fmt.Errorf("tool_use block %d starts with input %s, want {}", idx, gjson.GetBytes(e.Data, "content_block.input").Raw)
			}
		case "content_block_delta":
			idx := int(gjson.GetBytes(e.Data, "index").Int())
			if idx != open {
				return fmt.Errorf("delta for block %d while %d is open", idx, open)
			}
			dt := gjson.GetBytes(e.Data, "delta.type").String()
			allowed := map[string][]string{
				"text": {"text_delta", "citations_delta"}, "thinking": {"thinking_delta", "signature_delta"},
				"tool_use": {"input_json_delta"},
			}[openType]
			ok := false
			for _, a := range allowed {
				ok = ok || a == dt
			}
			if !ok {
				return fmt.Errorf("%s in a %s block", dt, openType)
			}
		case "content_block_stop":
			idx := int(gjson.GetBytes(e.Data, "index").Int())
			if idx != open {
				return fmt.Errorf("stop for block %d while %d is open", idx, open)
			}
			open = -1
		case "message_delta":
			if open >= 0 {
				return fmt.Errorf("message_delta with block %d open", open)
			}
			if i+2 != len(evs) || string(evs[i+1].Name) != "message_stop" {
				return fmt.Errorf("message_delta not followed by message_stop at the end")
			}
			if !gjson.GetBytes(e.Data, "delta.stop_reason").Exists() || !gjson.GetBytes(e.Data, "usage.output_tokens").Exists() {
				return fmt.Errorf("message_delta without stop_reason or usage: %s", e.Data)
			}
		case "message_stop":
			if !last {
				return fmt.Errorf("events after message_stop")
			}
		case "error":
			if !last {
				return fmt.Errorf("events after error")
			}
		default:
			return fmt.Errorf("unknown event %q", name)
		}
		if last && name != "message_stop" && name != "error" {
			return fmt.Errorf("stream ends with %q", name)
		}
	}
	return nil
}

// openAIGrammar checks a client stream against TRANSLATION.md §3.6:
//
//	S := FIRST (CHUNK | ": ping")* FINISH USAGE? [DONE] | FIRST? CHUNK* ERRDATA
//
// plus: one id on every chunk, role only in the first, tool-call id/name
// only in a call's first fragment with dense indexes, usage only when asked.
func openAIGrammar(b []byte, includeUsage bool) error {
	if err := validData(b); err != nil {
		return err
	}
	evs := events(b)
	var id string
	finishes, usages := 0, 0
	seenTools := map[int64]bool{}
	for i, e := range evs {
		if e.Data == nil {
			continue // comments
		}
		last := i == len(evs)-1
		d := string(e.Data)
		if len(e.Name) > 0 {
			return fmt.Errorf("OpenAI event with a name %q", e.Name)
		}
		if d == "[DONE]" {
			if !last {
				return fmt.Errorf("data after [DONE]")
			}
			if finishes != 1 {
				return fmt.Errorf("[DONE] after %d finish chunks, want 1", finishes)
			}
			if includeUsage && usages != 1 {
				return fmt.Errorf("%d usage chunks, want 1", usages)
			}
			return nil
		}
		if gjson.Get(d, "error").IsObject() {
			if !last {
				return fmt.Errorf("data after an error chunk")
			}
			return nil
		}
		if id == "" {
			id = gjson.Get(d, "id").String()
			if gjson.Get(d, "choices.0.delta.role").String() != "assistant" {
				return fmt.Errorf("first chunk lacks role assistant: %s", d)
			}
		} else {
			if got := gjson.Get(d, "id").String(); got != id {
				return fmt.Errorf("chunk id %q, want %q", got, id)
			}
			if gjson.Get(d, "choices.0.delta.role").Exists() {
				return fmt.Errorf("role repeated: %s", d)
			}
		}
		if u := gjson.Get(d, "usage"); u.IsObject() {
			usages++
			if !includeUsage {
				return fmt.Errorf("usage chunk the client did not ask for")
			}
			if n := len(gjson.Get(d, "choices").Array()); n != 0 {
				return fmt.Errorf("usage chunk with %d choices", n)
			}
			continue
		} else if includeUsage && u.Type != gjson.Null {
			return fmt.Errorf("chunk without usage:null while usage was asked for: %s", d)
		} else if !includeUsage && u.Exists() {
			return fmt.Errorf("usage member while usage was not asked for: %s", d)
		}
		if usages > 0 {
			return fmt.Errorf("chunk after the usage chunk")
		}
		if fr := gjson.Get(d, "choices.0.finish_reason"); fr.Type == gjson.String {
			finishes++
		} else if finishes > 0 {
			return fmt.Errorf("chunk after the finish chunk")
		}
		for _, tc := range gjson.Get(d, "choices.0.delta.tool_calls").Array() {
			idx := tc.Get("index").Int()
			if !seenTools[idx] {
				if int(idx) != len(seenTools) {
					return fmt.Errorf("tool call index %d, want %d", idx, len(seenTools))
				}
				seenTools[idx] = true
				if tc.Get("id").String() == "" || tc.Get("function.name").String() == "" {
					return fmt.Errorf("first fragment of tool %d lacks id or name", idx)
				}
			} else if tc.Get("id").Exists() || tc.Get("function.name").Exists() || tc.Get("type").Exists() {
				return fmt.Errorf("tool %d repeats id/type/name in a later fragment", idx)
			}
		}
	}
	if len(evs) == 0 {
		return fmt.Errorf("empty stream")
	}
	return fmt.Errorf("stream ends without [DONE] or an error chunk")
}

func checkAnthropicGrammar(t *testing.T, b []byte) {
	t.Helper()
	if strings.HasPrefix(string(b), "HTTP ") {
		return
	}
	if err := anthropicGrammar(b); err != nil {
		t.Errorf("Anthropic stream grammar: %v\n%s", err, b)
	}
}

func checkOpenAIGrammar(t *testing.T, b []byte, includeUsage bool) {
	t.Helper()
	if strings.HasPrefix(string(b), "HTTP ") {
		return
	}
	if err := openAIGrammar(b, includeUsage); err != nil {
		t.Errorf("OpenAI stream grammar: %v\n%s", err, b)
	}
}
