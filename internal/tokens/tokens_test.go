package tokens

import (
	"strings"
	"testing"
)

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

// TestCountInPieces: a long text is encoded in pieces, and the count is
// that of the whole text (white space between pieces keeps tokens whole).
func TestCountInPieces(t *testing.T) {
	enc, err := encoding()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5000) // 225 KB
	if got, want := Count(text), len(enc.EncodeOrdinary(text)); got != want {
		t.Errorf("Count = %d, whole-text encoding = %d", got, want)
	}
	// Without white space: pieces end on character boundaries.
	runes := strings.Repeat("é漢a1", 30000)
	if got, want := Count(runes), len(enc.EncodeOrdinary(runes)); got < want*99/100 || got > want*101/100 {
		t.Errorf("Count = %d, whole-text encoding = %d", got, want)
	}
}

func TestCounterBudget(t *testing.T) {
	text := strings.Repeat("abcdefghij0123456789", 50000) // 1 MB, no white space
	exact := Count(text)
	c := Counter{Budget: 64 << 10}
	c.Add(text)
	if got := c.Tokens(); got < exact*9/10 || got > exact*11/10 {
		t.Errorf("budgeted count %d, exact %d", got, exact)
	}
	if c.encoded > 64<<10+pieceBytes {
		t.Errorf("encoded %d bytes past a budget of %d", c.encoded, 64<<10)
	}
}

func TestCountChatRequest(t *testing.T) {
	var c Counter
	AddChatRequest(&c, []byte(`{"messages":[{"role":"user","content":"hello world"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":[{"type":"text","text":"hello world"},{"type":"image_url","image_url":{"url":"data:x"}}]}]}`))
	if got := c.Tokens(); got < 2+2+imageTokens+12 || got > 2+2+imageTokens+20 {
		t.Errorf("chat request = %d tokens", got)
	}
}
