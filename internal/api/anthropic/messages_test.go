package anthropic

import (
	"testing"

	"github.com/tollgate/tollgate/internal/jsonx"
)

func TestMessagesRequestRoundTrip(t *testing.T) {
	in := `{"model":"m","max_tokens":5,"system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"sig"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"b":1,"a":[2]}},{"type":"future_block","x":1}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":true}]}],"x_vendor":{"k":"v"}}`
	var r MessagesRequest
	if err := jsonx.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if !r.System.FromString || r.System.Blocks[0].Text != "be brief" {
		t.Errorf("system = %+v", r.System)
	}
	if string(r.Extra) != `{"x_vendor":{"k":"v"}}` {
		t.Errorf("Extra = %s, want the unknown member", r.Extra)
	}
	tu := r.Messages[1].Content.Blocks[1]
	if string(tu.Input) != `{"b":1,"a":[2]}` {
		t.Errorf("tool input = %s, want the raw bytes", tu.Input)
	}
	if string(r.Messages[1].Content.Blocks[2].Extra) != `{"x":1}` {
		t.Errorf("unknown block member lost: %s", r.Messages[1].Content.Blocks[2].Extra)
	}
	out, err := jsonx.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	empty, _ := jsonx.Marshal(Message{Role: "user"})
	if string(empty) != `{"role":"user","content":[]}` {
		t.Errorf("empty content = %s", empty)
	}
}
