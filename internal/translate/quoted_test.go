package translate

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"
)

func TestQuotedRaw(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"s":"plain"}`, `"plain"`},
		{`{"s":"a\"b\\c\/\n\u00e9"}`, `"a\"b\\c\/\n\u00e9"`},
		{"{\"s\":\"line\nbreak\"}", `"line\nbreak"`},
		{`{"s":"bad\qescape"}`, ``},
		{`{"s":"short\u00"}`, ``},
		{"{\"s\":\"\xff\"}", ``},
	} {
		got := quotedRaw(gjson.Get(tc.doc, "s"))
		if !jsontext.Value(got).IsValid() {
			t.Errorf("%q: %q is not a JSON string", tc.doc, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.doc, got, tc.want)
		}
	}
}
