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

// AppendQuote and Marshal repair invalid UTF-8 alike.
func TestAppendQuoteAgreesWithMarshal(t *testing.T) {
	for _, s := range []string{"a\xff\x80b", "\xe2\x82", "ok ✓"} {
		m, _ := Marshal(s)
		if q := AppendQuote(nil, s); string(q) != string(m) {
			t.Errorf("%q: AppendQuote %q, Marshal %q", s, q, m)
		}
	}
}
