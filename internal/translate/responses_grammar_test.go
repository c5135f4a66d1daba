package translate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/sse"
)

// responsesGrammar checks a Responses client stream:
//
//	S := response.created response.in_progress I* T
//	I := output_item.added(i) E(i)* output_item.done(i), i = 0, 1, 2, … in order
//	T := response.completed | response.incomplete | response.failed
//
// plus: every event named as its data.type, sequence numbers counting
// from 0, no error member outside error events, each item's events
// carrying its id and index and of its kind, each .done text or
// arguments the sum of its deltas, function_call_arguments.done naming
// the function, and the terminal response listing the items streamed
// with the status its event says.
func responsesGrammar(b []byte) error {
	if err := validData(b); err != nil {
		return err
	}
	var evs []sse.Fields
	for _, e := range events(b) {
		if e.Data != nil { // comments (keep-alive pings) are not events
			evs = append(evs, e)
		}
	}
	if len(evs) < 3 {
		return fmt.Errorf("%d events, want at least created, in_progress and a terminal event", len(evs))
	}
	var (
		items   []string // ids of finished items
		openID  string
		openTyp string
		text    strings.Builder
		parts   int
		cutItem string // an item done as incomplete: only the last, in an incomplete response
	)
	for i, e := range evs {
		name := string(e.Name)
		d := gjson.ParseBytes(e.Data)
		if typ := d.Get("type").Str; typ != name {
			return fmt.Errorf("event %d named %q carries type %q", i, name, typ)
		}
		if n := d.Get("sequence_number"); n.Type != gjson.Number || n.Int() != int64(i) {
			return fmt.Errorf("event %d (%s) has sequence_number %s", i, name, n.Raw)
		}
		if d.Get("error").Exists() && name != "error" {
			return fmt.Errorf("event %d (%s) has a top-level error member", i, name)
		}
		last := i == len(evs)-1
		switch {
		case i == 0:
			if name != "response.created" {
				return fmt.Errorf("first event %q, want response.created", name)
			}
			continue
		case i == 1:
			if name != "response.in_progress" {
				return fmt.Errorf("second event %q, want response.in_progress", name)
			}
			continue
		}
		switch name {
		case "response.completed", "response.incomplete", "response.failed":
			if !last {
				return fmt.Errorf("event %d: %s is not last", i, name)
			}
			r := d.Get("response")
			if want := strings.TrimPrefix(name, "response."); r.Get("status").Str != want {
				return fmt.Errorf("%s with status %q", name, r.Get("status").Str)
			}
			if name == "response.failed" {
				if !r.Get("error.message").Exists() {
					return fmt.Errorf("response.failed without error.message")
				}
				return nil
			}
			if openID != "" {
				return fmt.Errorf("%s with item %s still open", name, openID)
			}
			out := r.Get("output").Array()
			if len(out) != len(items) {
				return fmt.Errorf("%s lists %d items, %d were streamed", name, len(out), len(items))
			}
			for k, it := range out {
				if it.Get("id").Str != items[k] {
					return fmt.Errorf("%s output[%d] is %s, streamed %s", name, k, it.Get("id").Str, items[k])
				}
			}
			if cutItem != "" && name != "response.incomplete" {
				return fmt.Errorf("item %s done as incomplete in a %s response", cutItem, name)
			}
			if name == "response.incomplete" && r.Get("incomplete_details.reason").Str == "" {
				return fmt.Errorf("response.incomplete without a reason")
			}
			return nil
		case "response.output_item.added":
			if cutItem != "" {
				return fmt.Errorf("event %d: item added after incomplete item %s", i, cutItem)
			}
			if openID != "" {
				return fmt.Errorf("event %d: item added while %s is open", i, openID)
			}
			if idx := d.Get("output_index").Int(); idx != int64(len(items)) {
				return fmt.Errorf("event %d: item added at index %d, want %d", i, idx, len(items))
			}
			openID, openTyp = d.Get("item.id").Str, d.Get("item.type").Str
			if openID == "" {
				return fmt.Errorf("event %d: item without an id", i)
			}
			text.Reset()
			parts = 0
			continue
		}
		if openID == "" {
			return fmt.Errorf("event %d: %s outside an item", i, name)
		}
		if d.Get("item_id").Str != openID && d.Get("item.id").Str != openID {
			return fmt.Errorf("event %d: %s for another item than %s", i, name, openID)
		}
		if idx := d.Get("output_index").Int(); idx != int64(len(items)) {
			return fmt.Errorf("event %d: %s at index %d, want %d", i, name, idx, len(items))
		}
		kinds := map[string]string{
			"response.content_part.added": "message", "response.output_text.delta": "message",
			"response.output_text.done": "message", "response.content_part.done": "message",
			"response.reasoning_summary_part.added": "reasoning", "response.reasoning_summary_text.delta": "reasoning",
			"response.reasoning_summary_text.done": "reasoning", "response.reasoning_summary_part.done": "reasoning",
			"response.function_call_arguments.delta": "function_call", "response.function_call_arguments.done": "function_call",
			"response.custom_tool_call_input.delta": "custom_tool_call", "response.custom_tool_call_input.done": "custom_tool_call",
			"response.web_search_call.in_progress": "web_search_call", "response.web_search_call.searching": "web_search_call",
			"response.web_search_call.completed": "web_search_call",
		}
		if name == "response.output_item.done" {
			it := d.Get("item")
			if st := it.Get("status").Str; st != "completed" && st != "incomplete" || it.Get("type").Str != openTyp {
				return fmt.Errorf("event %d: item done as %s/%s", i, it.Get("type").Str, it.Get("status").Str)
			}
			if a := it.Get("arguments").Str; openTyp == "function_call" && a != text.String() && !(a == "{}" && text.Len() == 0) {
				return fmt.Errorf("event %d: item done with arguments %q, streamed %q", i, it.Get("arguments").Str, text.String())
			}
			if it.Get("status").Str == "incomplete" {
				cutItem = openID
			}
			items = append(items, openID)
			openID = ""
			continue
		}
		kind, ok := kinds[name]
		if !ok {
			return fmt.Errorf("event %d: unknown event %q", i, name)
		}
		if kind != openTyp {
			return fmt.Errorf("event %d: %s inside a %s item", i, name, openTyp)
		}
		switch {
		case strings.HasSuffix(name, "_part.added"):
			parts++
		case strings.HasSuffix(name, ".delta"):
			if parts == 0 && kind != "function_call" && kind != "custom_tool_call" {
				return fmt.Errorf("event %d: delta before its part", i)
			}
			text.WriteString(d.Get("delta").Str)
			if name == "response.output_text.delta" && !d.Get("logprobs").IsArray() {
				return fmt.Errorf("event %d: output_text.delta without logprobs", i)
			}
		case name == "response.output_text.done" || name == "response.reasoning_summary_text.done":
			if d.Get("text").Str != text.String() {
				return fmt.Errorf("event %d: %s text %q, deltas %q", i, name, d.Get("text").Str, text.String())
			}
		case name == "response.function_call_arguments.done":
			if d.Get("name").Str == "" {
				return fmt.Errorf("event %d: function_call_arguments.done without the name", i)
			}
			if a := d.Get("arguments").Str; a != text.String() && !(a == "{}" && text.Len() == 0) {
				return fmt.Errorf("event %d: arguments %q, deltas %q", i, a, text.String())
			}
		case name == "response.custom_tool_call_input.done":
			if d.Get("input").Str != text.String() {
				return fmt.Errorf("event %d: input %q, deltas %q", i, d.Get("input").Str, text.String())
			}
		}
	}
	return fmt.Errorf("stream ends without a terminal event")
}

func checkResponsesGrammar(t *testing.T, b []byte) {
	t.Helper()
	if strings.HasPrefix(string(b), "HTTP ") {
		return
	}
	if err := responsesGrammar(b); err != nil {
		t.Errorf("Responses stream grammar: %v\n%s", err, b)
	}
}
