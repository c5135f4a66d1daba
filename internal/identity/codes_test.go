package identity

import (
	"strings"
	"testing"
)

func TestUserCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		c := newUserCode()
		if len(c) != 8 || strings.Trim(c, userCodeAlphabet) != "" {
			t.Fatalf("user code %q: want 8 letters of %s", c, userCodeAlphabet)
		}
		if normalUserCode(displayUserCode(c)) != c {
			t.Fatalf("%q does not read back from %q", c, displayUserCode(c))
		}
		seen[c] = true
	}
	if len(seen) < 199 {
		t.Errorf("%d distinct codes in 200", len(seen))
	}
	for in, want := range map[string]string{
		"wdjb-mjht": "WDJBMJHT", "WDJB MJHT": "WDJBMJHT", " wdjbmjht ": "WDJBMJHT",
		"WDJB-MJH": "", "WDJB-MJHTX": "", "WDJB-MJH1": "", "AEIO-UUUU": "", "": "", "ÅDJB-MJHT": "",
	} {
		if got := normalUserCode(in); got != want {
			t.Errorf("normalUserCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestETagMatch(t *testing.T) {
	for _, tc := range []struct {
		list string
		want bool
	}{
		{`"abc"`, true}, {`W/"abc"`, true}, {`"x", "abc"`, true}, {`*`, true},
		{`"abcd"`, false}, {`abc`, false}, {``, false},
	} {
		if got := etagMatch(tc.list, `"abc"`); got != tc.want {
			t.Errorf("etagMatch(%q) = %v", tc.list, got)
		}
	}
}

// FuzzNormalUserCode: whatever a person types, the code read from it is
// empty or eight letters of the alphabet.
func FuzzNormalUserCode(f *testing.F) {
	f.Add("WDJB-MJHT")
	f.Add("wdjb mjht")
	f.Add("ÅÅÅÅ")
	f.Fuzz(func(t *testing.T, s string) {
		c := normalUserCode(s)
		if c != "" && (len(c) != 8 || strings.Trim(c, userCodeAlphabet) != "") {
			t.Fatalf("normalUserCode(%q) = %q", s, c)
		}
	})
}
