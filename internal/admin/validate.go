package admin

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Bounds on what a key may hold.
const (
	maxNameLen      = 200 // bytes
	maxModels       = 256 // entries in models, and in model_limits
	maxModelNameLen = 256 // bytes
	maxMetadataLen  = 16 << 10
	maxParamLen     = 256 // bytes of a query parameter or path id
)

// checkText refuses text a database cannot hold as it is, or that is too
// long: invalid UTF-8, NUL. With plain, it also refuses control characters
// (newlines, escape sequences) and the bidirectional overrides that would
// make the text print as something else.
func checkText(field, s string, maxLen int, plain bool) error {
	switch {
	case !utf8.ValidString(s):
		return invalid("%s: not valid UTF-8", field)
	case strings.IndexByte(s, 0) >= 0:
		return invalid("%s: must not contain NUL (\\u0000)", field)
	case len(s) > maxLen:
		return invalid("%s: at most %d bytes, not %d", field, maxLen, len(s))
	case plain && strings.IndexFunc(s, unprintable) >= 0:
		return invalid("%s: must not contain control characters such as newlines, tabs or escape sequences", field)
	}
	return nil
}

// unprintable is a control character (C0, DEL, C1) or a bidirectional
// embedding, override or isolate.
func unprintable(r rune) bool {
	return unicode.IsControl(r) || '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069'
}

// checkParam refuses a query parameter or path id no key or record could
// have; the message names it.
func checkParam(name, v string) error { return checkText(name, v, maxParamLen, false) }

// checkMetadataStrings refuses metadata with a NUL in a name or value:
// valid JSON, but text that databases and the tools reading it refuse.
func checkMetadataStrings(v jsontext.Value) error {
	if !bytes.Contains(v, []byte(`\u0000`)) {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil // the value was validated before; the end
		}
		if tok.Kind() == '"' && strings.IndexByte(tok.String(), 0) >= 0 {
			return invalid("metadata: must not contain NUL (\\u0000), found at %s", dec.StackPointer())
		}
	}
}
