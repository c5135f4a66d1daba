package tokens

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// TestClasses holds each character class to the pattern's, as regexp2
// matches it, over every code point of the planes that have letters,
// digits, marks or spaces (0-3 and 14).
func TestClasses(t *testing.T) {
	var all []rune
	for r := range rune(0x40000) {
		if utf8.ValidRune(r) {
			all = append(all, r)
		}
	}
	for r := rune(0xE0000); r < 0xF0000; r++ {
		all = append(all, r)
	}
	text := string(all)
	for _, tc := range []struct {
		class string
		bits  uint8
	}{
		{`[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, clsUpper},
		{`[\p{Ll}\p{Lm}\p{Lo}\p{M}]`, clsLower},
		{`\p{L}`, clsLetter},
		{`\p{N}`, clsNumber},
		{`\s`, clsSpace},
		{`[\r\n]`, clsNewline},
	} {
		in := make([]bool, len(all))
		re := regexp2.MustCompile(tc.class+"+", regexp2.None)
		m, err := re.FindStringMatch(text)
		for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
			for i := m.Index; i < m.Index+m.Length; i++ {
				in[i] = true
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i, r := range all {
			if got := classOf(r)&tc.bits != 0; got != in[i] && bad < 5 {
				bad++
				t.Errorf("%s: %U: %v, want %v", tc.class, r, got, in[i])
			}
		}
	}
}

// pieces cuts text with pieceLen.
func pieces(text string) []string {
	var out []string
	for len(text) > 0 {
		k := pieceLen(text)
		out = append(out, text[:k])
		text = text[k:]
	}
	return out
}

// referencePieces cuts text with the pattern compiled by regexp2.
var referencePattern = regexp2.MustCompile(pattern, regexp2.None)

func referencePieces(t testing.TB, text string) []string {
	runes := []rune(text)
	var out []string
	m, err := referencePattern.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = referencePattern.FindNextMatch(m) {
		out = append(out, string(runes[m.Index:m.Index+m.Length]))
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var pieceTexts = []string{
	"hello world",
	"Hello, World! It's 2024: I'M here; we'RE done, they'Ve gone, you'll see, he'd go, 'tis",
	"HTTPServer parseJSON XMLHttpRequest iPhone McDonald's",
	"  leading  and   trailing   \n\n\t\n  lines\r\n\r\nend  ",
	"x = y/2; // ok?  return a->b[i] != c && d || !e;\n\tif (x) {\n\t\tgo();\n\t}\n",
	"12345678901 3.14159 1,000,000 ١٢٣٤ ½ Ⅻ",
	"汉字、かな。カタカナ，한국어 ภาษาไทยไม่มีช่องว่าง العربية עברית",
	"e\u0301 \u0301a \u0301\u0301B\u0301 A\u0301b ǅemal ǈ ʰʰʰ",
	"emoji 👍🏽 👨‍👩‍👧 🇫🇷!!! ***---===___",
	"https://example.com/a/b?c=d&e=f#g //\n//\r\n/",
	"\u00a0\u2003x\u3000y\u2028z\u0085w \u180e\ufeff",
	"ſs'ſ K'S 'LL 'Re 'rE 'x ' 'l",
	"aaaa\n\n\n   \n \t ", " \n", "\n ", " ", "\t", "'", "1", " 1", "!1", "a'", "A'S",
	"SGVsbG8gV29ybGQhIFRoaXMgaXMgYmFzZTY0Lw+/==",
	"bad \xff\xfe utf-8 \xe6\x97 here\xc3",
}

// TestPieceLen: pieces are those of the pattern, as regexp2 (and so
// tiktoken-go) cuts them.
func TestPieceLen(t *testing.T) {
	for _, text := range pieceTexts {
		valid := string([]rune(text)) // regexp2 reads bad bytes as U+FFFD
		got, want := pieces(valid), referencePieces(t, valid)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("%q:\n got %q\nwant %q", text, got, want)
		}
	}
}

func FuzzPieceLen(f *testing.F) {
	for _, text := range pieceTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<10 {
			return // the backtracking reference is slow on long text
		}
		raw := pieces(text)
		if got := strings.Join(raw, ""); got != text {
			t.Fatalf("pieces of %q join to %q", text, got)
		}
		valid := string([]rune(text))
		got, want := pieces(valid), referencePieces(t, valid)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("%q:\n got %q\nwant %q", valid, got, want)
		}
	})
}
