package jsonx

import "testing"

// Upstream text with invalid UTF-8 still encodes, repaired: an error
// message or a delta must never turn into a truncated or missing body.
func TestMarshalRepairsInvalidUTF8(t *testing.T) {
	b, err := Marshal(map[string]string{"m": "a\xffb"})
	if err != nil || string(b) != "{\"m\":\"a\uFFFDb\"}" {
		t.Fatalf("Marshal: %q, %v", b, err)
	}
}
