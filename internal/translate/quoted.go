package translate

import (
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// quotedRaw is r, a JSON string as the upstream sent it, when it can be
// copied into a client event as is, and the string re-encoded otherwise:
// gjson reads leniently, and a raw control character (a line break ends
// an SSE event), a bad escape or invalid UTF-8 would reach the client.
func quotedRaw(r gjson.Result) string {
	raw := r.Raw
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || !utf8.ValidString(raw) {
		return string(jsonx.AppendQuote(nil, r.Str))
	}
	for i := 1; i < len(raw)-1; i++ {
		switch c := raw[i]; {
		case c < 0x20:
			return string(jsonx.AppendQuote(nil, r.Str))
		case c == '\\':
			i++
			switch raw[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(raw)-1 || !isHex4(raw[i+1:i+5]) {
					return string(jsonx.AppendQuote(nil, r.Str))
				}
				i += 4
			default:
				return string(jsonx.AppendQuote(nil, r.Str))
			}
		}
	}
	return raw
}

func isHex4(s string) bool {
	for i := range 4 {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
