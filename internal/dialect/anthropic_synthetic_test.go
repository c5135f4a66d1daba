package dialect

import (
	"testing"

	"github.com/tidwall/gjson"
)

// T17: tollgate-signed thinking never reaches an Anthropic upstream.
func TestStripSyntheticThinking(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		wantRemoved  bool
		wantThinking bool   // thinking config kept
		wantContent  string // messages.1.content, compacted
	}{
		{"no marker: untouched", `{"thinking":{"type":"enabled","budget_tokens":2000},"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"EqQB"},{"type":"text","text":"b"}]}]}`,
			false, true, `[{"type":"thinking","thinking":"t","signature":"EqQB"},{"type":"text","text":"b"}]`},
		{"synthetic block removed, text turn keeps thinking on", `{"thinking":{"type":"enabled","budget_tokens":2000},"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"tollgate.v1.abc"},{"type":"text","text":"b"}]}]}`,
			true, true, `[{"type":"text","text":"b"}]`},
		{"tool turn loses its lead: thinking off", `{"thinking":{"type":"enabled","budget_tokens":2000},"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"tollgate.v1.abc"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`,
			true, false, `[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, removed := stripSyntheticThinking([]byte(tc.in))
			if removed != tc.wantRemoved {
				t.Fatalf("removed = %v, want %v", removed, tc.wantRemoved)
			}
			if !removed && string(out) != tc.in {
				t.Errorf("body changed without a synthetic signature")
			}
			if got := gjson.GetBytes(out, "thinking").Exists(); got != tc.wantThinking {
				t.Errorf("thinking kept = %v, want %v: %s", got, tc.wantThinking, out)
			}
			if got := gjson.GetBytes(out, "messages.1.content").Raw; got != tc.wantContent {
				t.Errorf("content = %s, want %s", got, tc.wantContent)
			}
		})
	}
}
