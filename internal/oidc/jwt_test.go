package oidc

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// A real RS256 token's shape, with a short signature.
var sampleJWT = b64(`{"alg":"RS256","kid":"k1","typ":"JWT"}`) + "." + b64(`{"sub":"a"}`) + ".c2lnbmF0dXJl"

func TestLooksLikeJWT(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{sampleJWT, true},
		{b64(`{"alg":"none"}`) + "." + b64(`{}`) + ".", true}, // unsigned: still a JWT, refused later
		{b64(` {"typ":"JWT", "alg" : "ES256"}`) + ".e30.sig", true},
		{"", false},
		{"sk-tg-" + strings.Repeat("A", 43), false},
		{"tg-abc.def.ghi", false}, // the header is not JSON
		{b64(`{"alg":"RS256"}`) + ".e30", false},
		{b64(`{"alg":"RS256"}`) + ".e30.sig.more", false},
		{b64(`{"alg":"RS256"}`) + "..sig", false},
		{"." + b64(`{}`) + ".sig", false},
		{b64(`{"typ":"JWT"}`) + ".e30.sig", false},
		{b64(`{"alg":256}`) + ".e30.sig", false},
		{b64(`[{"alg":"RS256"}]`) + ".e30.sig", false},
		{b64(`"alg"`) + ".e30.sig", false},
		{b64(`{"alg":"RS256"`) + ".e30.sig", false},
		{base64.URLEncoding.EncodeToString([]byte("{\"alg\":\"RS256\"}\n")) + ".e30.sig", false}, // padded
		{base64.StdEncoding.EncodeToString([]byte(`{"alg":"RS256","x":"??>"}`)) + ".e30.sig", false},
		{b64(`{"alg":"RS256","pad":"`+strings.Repeat("x", maxHeaderBytes)+`"}`) + ".e30.sig", false},
		{"Bearer " + sampleJWT, false},
		{b64(`{"alg":"4"}`) + ".0.", false},      // a segment no length of bytes encodes to
		{b64(`{"alg":"4"}`) + ".e31.sig", false}, // bits set past the last byte
	}
	for _, tt := range tests {
		if got := LooksLikeJWT(tt.in); got != tt.want {
			t.Errorf("LooksLikeJWT(%.60q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestLooksLikeJWTDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { LooksLikeJWT(sampleJWT) }); n != 0 {
		t.Errorf("LooksLikeJWT allocates %v times, want 0", n)
	}
}

func FuzzLooksLikeJWT(f *testing.F) {
	for _, s := range []string{sampleJWT, "sk-tg-abc", "a.b.c", b64(`{"alg":"none"}`) + ".e30.", "e30.e30.e30", b64(`{"alg":"RS256"}`) + "Q.e30.x", "eyJhbGciOiI0In0.0."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !LooksLikeJWT(s) {
			return
		}
		// What it accepts, the standard library reads the same way.
		parts := strings.Split(s, ".")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
			t.Fatalf("accepted %q: %d segments", s, len(parts))
		}
		for _, p := range parts {
			if _, err := base64.RawURLEncoding.Strict().DecodeString(p); err != nil {
				t.Fatalf("accepted %q: segment %q: %v", s, p, err)
			}
		}
		h, _ := base64.RawURLEncoding.DecodeString(parts[0])
		var hdr map[string]any
		if err := json.Unmarshal(h, &hdr); err != nil {
			t.Fatalf("accepted %q: header %q: %v", s, h, err)
		}
		if _, ok := hdr["alg"].(string); !ok {
			t.Fatalf("accepted %q: header %q has no string alg", s, h)
		}
	})
}
