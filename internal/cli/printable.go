package cli

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// printable makes s safe to print in a table on a terminal: characters a
// terminal would act on, or that would break the table's columns, are
// shown escaped as in a Go string literal — control characters (\n, \t,
// \x1b of an escape sequence, \x9b), bidirectional overrides and other
// invisible formatting (\u202e), and bytes that are not UTF-8 (\xff).
// Printable text in any script is kept as it is. JSON and CSV output do
// not go through it: their encoders escape what their formats need.
func printable(s string) string {
	i := strings.IndexFunc(s, escaped)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case escaped(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escaped is a rune printable shows escaped: anything strconv.IsPrint
// refuses but the zero-width joiners that emoji and several scripts need.
func escaped(r rune) bool {
	return !strconv.IsPrint(r) && r != '\u200c' && r != '\u200d' && r != utf8.RuneError
}
