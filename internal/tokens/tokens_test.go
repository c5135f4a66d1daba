package tokens

import "testing"

func TestCount(t *testing.T) {
	// o200k_base: "hello world" is 2 tokens.
	if got := Count("hello world"); got != 2 {
		t.Errorf("Count(hello world) = %d, want 2", got)
	}
	if got := Count(""); got != 0 {
		t.Errorf("Count(\"\") = %d", got)
	}
}

func TestCountMessagesRequest(t *testing.T) {
	small := CountMessagesRequest([]byte(`{"messages":[{"role":"user","content":"hello world"}]}`))
	if small != 2+4+3 {
		t.Errorf("small = %d, want 9", small)
	}
	withImage := CountMessagesRequest([]byte(`{"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hello world"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]}],"tools":[{"name":"f","description":"does f","input_schema":{"type":"object"}}]}`))
	if withImage < small+imageTokens+5 {
		t.Errorf("withImage = %d, want more than %d", withImage, small+imageTokens+5)
	}
}
