package tokens

import (
	"unicode"
	"unicode/utf8"
)

// The o200k_base encoding first cuts text into pieces with this pattern
// (tiktoken's, matched leftmost alternative first, greedily, with
// backtracking), then encodes each piece on its own with byte-pair merges:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n/]*
//	|\s*[\r\n]+
//	|\s+(?!\S)
//	|\s+
//
// pieceLen matches it by hand, in one pass and without allocating: a
// backtracking matcher takes a couple of hundred nanoseconds a byte, more
// than the rest of the count. Its tests hold it to the pattern compiled
// with regexp2 (the engine tiktoken-go uses), class by class over every
// code point and piece by piece on fuzzed text.
const pattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
	`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
	`|\p{N}{1,3}` +
	`| ?[^\s\p{L}\p{N}]+[\r\n/]*` +
	`|\s*[\r\n]+` +
	`|\s+(?!\S)` +
	`|\s+`

// Character classes of the pattern, as bits.
const (
	clsUpper   = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clsLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	clsLetter              // \p{L}
	clsNumber              // \p{N}
	clsSpace               // \s
	clsNewline             // [\r\n]
)

// asciiClass holds the classes of the ASCII characters.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classOf(r)
	}
	return t
}()

func classOf(r rune) uint8 {
	switch {
	case unicode.IsLetter(r):
		switch {
		case unicode.In(r, unicode.Lu, unicode.Lt):
			return clsLetter | clsUpper
		case unicode.Is(unicode.Ll, r):
			return clsLetter | clsLower
		default: // Lm, Lo
			return clsLetter | clsUpper | clsLower
		}
	case unicode.Is(unicode.M, r):
		return clsUpper | clsLower
	case unicode.IsNumber(r):
		return clsNumber
	case r == '\r' || r == '\n':
		return clsSpace | clsNewline
	case unicode.IsSpace(r):
		return clsSpace
	}
	return 0
}

// prefixable: [^\r\n\p{L}\p{N}], the optional character before a word.
func prefixable(c uint8) bool { return c&(clsNewline|clsLetter|clsNumber) == 0 }

// symbol: [^\s\p{L}\p{N}].
func symbol(c uint8) bool { return c&(clsSpace|clsLetter|clsNumber) == 0 }

// classAt returns the class of the character at s[i] and its length. An
// invalid byte is U+FFFD, as tiktoken-go reads it (a symbol).
func classAt(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return classOf(r), n
}

// run returns the end of the run of characters of class want from i.
func run(s string, i int, want uint8) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c&want == 0 {
			break
		}
		i += n
	}
	return i
}

// contraction returns the end of an optional (?i:'s|'t|'re|'ve|'m|'ll|'d) at i.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	var second byte
	switch s[i+1] | 0x20 { // ASCII lower case
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		second = 'e'
	case 'l':
		second = 'l'
	default:
		return i
	}
	if i+2 < len(s) && s[i+2]|0x20 == second {
		return i + 3
	}
	return i
}

// pieceLen returns the length of the first piece of s (not empty).
func pieceLen(s string) int {
	c0, n0 := classAt(s, 0)
	// Words: the two letter alternatives, each with the optional prefix
	// taken first, then without it (which differs only for a mark).
	if c0&(clsUpper|clsLower) != 0 || prefixable(c0) {
		starts := [2]int{0, 0}
		k := 0
		if prefixable(c0) {
			starts[k] = n0
			k++
		}
		if c0&(clsUpper|clsLower) != 0 {
			starts[k] = 0
			k++
		}
		for _, i := range starts[:k] {
			if end := upperLower(s, i); end > 0 {
				return end
			}
		}
		for _, i := range starts[:k] {
			if end := run(s, i, clsUpper); end > i {
				return contraction(s, run(s, end, clsLower))
			}
		}
	}
	if c0&clsNumber != 0 { // \p{N}{1,3}
		i := n0
		for range 2 {
			if i == len(s) {
				break
			}
			c, n := classAt(s, i)
			if c&clsNumber == 0 {
				break
			}
			i += n
		}
		return i
	}
	// Symbols:  ?[^\s\p{L}\p{N}]+[\r\n/]*
	i := 0
	if s[0] == ' ' {
		i = 1
	}
	if end := symbols(s, i); end > i {
		for end < len(s) && (s[end] == '\r' || s[end] == '\n' || s[end] == '/') {
			end++
		}
		return end
	}
	if c0&clsSpace == 0 {
		return n0 // unreachable: every character is in one class above
	}
	// White space: \s*[\r\n]+ ends after the run's last newline; else
	// \s+(?!\S) leaves the run's last character to the word after it;
	// else \s+.
	end, last, newline := 0, 0, -1
	for end < len(s) {
		c, n := classAt(s, end)
		if c&clsSpace == 0 {
			break
		}
		if c&clsNewline != 0 {
			newline = end
		}
		last = end
		end += n
	}
	switch {
	case newline >= 0:
		return newline + 1
	case end < len(s) && last > 0:
		return last
	}
	return end
}

// upperLower matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// and a contraction at i, backtracking as a regular expression engine
// does: the longest upper run after which a lower run starts. It returns
// 0 if there is no match.
func upperLower(s string, i int) int {
	k := run(s, i, clsUpper)
	for {
		if k < len(s) {
			if c, _ := classAt(s, k); c&clsLower != 0 {
				return contraction(s, run(s, k, clsLower))
			}
		}
		if k == i {
			return 0
		}
		_, n := utf8.DecodeLastRuneInString(s[i:k])
		k -= n
	}
}

// symbols returns the end of the run of [^\s\p{L}\p{N}] from i.
func symbols(s string, i int) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if !symbol(c) {
			break
		}
		i += n
	}
	return i
}
