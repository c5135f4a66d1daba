package tokens

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// reference is tiktoken-go's o200k_base encoder, whose counts Count must
// equal on ordinary text.
var reference = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	return tiktoken.GetEncoding("o200k_base")
})

func referenceCount(t testing.TB, text string) int {
	enc, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	return len(enc.EncodeOrdinary(text))
}

func count(t testing.TB, text string) int {
	n, err := Count(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// randomText is n bytes drawn from alphabet, the same for the same seed.
func randomText(seed uint64, alphabet string, n int) string {
	rnd := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rnd.IntN(len(alphabet))]
	}
	return string(b)
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

func TestCount(t *testing.T) {
	// o200k_base: "hello world" is 2 tokens.
	if got := count(t, "hello world"); got != 2 {
		t.Errorf("Count(hello world) = %d, want 2", got)
	}
	if got := count(t, ""); got != 0 {
		t.Errorf("Count(\"\") = %d", got)
	}
}

// TestCountEqualsTiktoken: on ordinary text, long or short, the count is
// tiktoken's exactly.
func TestCountEqualsTiktoken(t *testing.T) {
	texts := append([]string{
		strings.Repeat("The quick brown fox jumps over the lazy dog. ", 1000), // 45 KB
		strings.Repeat("é漢a1", 5000),
		strings.Repeat("func (c *Counter) Add(text string) {\n\tif !c.live() {\n\t\treturn\n\t}\n}\n\n", 100),
		strings.Repeat(`{"role":"user","content":[{"type":"text","text":"Résumé, s'il vous plaît — 42€"}]}`, 500),
		strings.Repeat("東京都は日本の首都であり、世界最大の都市圏を持つ。", 300),
		strings.Repeat("ภาษาไทยเป็นภาษาที่ไม่มีการเว้นวรรคระหว่างคำ ", 300),
		randomText(1, base64Alphabet, 32<<10),                        // an inline image
		randomText(2, "0123456789", 16<<10),                          // digits make pieces of three
		randomText(3, "0123456789abcdef", 16<<10),                    // hex
		randomText(4, "abcdefghijklmnopqrstuvwxyz ", 16<<10),         // words of random letters
		randomText(5, " \t\n.,;:!?-=*#/'\"()[]{}<>", 16<<10),         // punctuation and white space
		strings.Repeat("a", maxPiece), strings.Repeat(" ", maxPiece), // the longest pieces merged whole
	}, pieceTexts...)
	for _, text := range texts {
		if got, want := count(t, text), referenceCount(t, text); got != want {
			t.Errorf("Count(%.40q…, %d bytes) = %d, tiktoken %d", text, len(text), got, want)
		}
	}
}

func TestCounterBudget(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("abcdefghij0123456789", 12500),         // 250 KB, no white space
		randomText(11, "abcdefghijklmnopqrstuvwxyz", 256<<10), // one piece
	} {
		exact := count(t, text)
		c := Counter{Budget: 32 << 10}
		c.Add(text)
		if got := c.Tokens(); got < exact*9/10 || got > exact*11/10 {
			t.Errorf("budgeted count %d, exact %d", got, exact)
		}
		if c.encoded > 32<<10+maxPiece {
			t.Errorf("encoded %d bytes past a budget of %d", c.encoded, 32<<10)
		}
	}
}

// pathological texts: each one long piece, counted in chunks.
func pathological(n int) map[string]string {
	return map[string]string{
		"one letter":      strings.Repeat("a", n),
		"upper case":      strings.Repeat("A", n),
		"random lower":    randomText(6, "abcdefghijklmnopqrstuvwxyz", n),
		"abc":             strings.Repeat("abc", n/3),
		"ideographs":      strings.Repeat("漢", n/3),
		"spaces":          strings.Repeat(" ", n),
		"newlines":        strings.Repeat("\n", n),
		"spaces newlines": strings.Repeat(" \n\t", n/3),
		"equals":          strings.Repeat("=", n),
		"punctuation":     randomText(7, "!#$%&()*+,-.:;<=>?@[]^_`{|}~", n),
	}
}

// exactCount counts text merging every piece whole, however long.
func exactCount(t *testing.T, text string) int {
	v, err := vocab()
	if err != nil {
		t.Fatal(err)
	}
	var m merger
	n := 0
	for _, p := range pieces(text) {
		if _, ok := v.ranks[p]; ok || len(p) < 2 {
			n++
		} else {
			n += m.count(p, v)
		}
	}
	return n
}

// TestChunkedCount: a piece longer than maxPiece is counted in chunks,
// at most one token from the exact count per chunk boundary.
func TestChunkedCount(t *testing.T) {
	const n = 16 * maxPiece
	for name, text := range pathological(n) {
		got, exact := count(t, text), exactCount(t, text)
		if diff := got - exact; diff < -n/maxPiece || diff > n/maxPiece {
			t.Errorf("%s: chunked count %d, exact %d", name, got, exact)
		}
	}
}

// TestCountLinear: the work of a count (bytes read, heap steps, rank
// look-ups) grows linearly with its text, whatever the text: the work
// added by doubling the text doubles when the text doubles again (with
// a quadratic merge it would quadruple). The texts are short enough to
// be one piece each for an encoder that cuts text at 32 KiB.
func TestCountLinear(t *testing.T) {
	const n = 8 << 10
	texts := [3]map[string]string{pathological(n), pathological(2 * n), pathological(4 * n)}
	for i, m := range texts {
		m["prose"] = strings.Repeat("The quick brown fox jumps over the lazy dog. ", n<<i/45)
		m["base64"] = randomText(8, base64Alphabet, n<<i)
	}
	for name := range texts[0] {
		var work [3]int
		for i := range texts {
			var c Counter
			c.Add(texts[i][name])
			work[i] = c.work
		}
		d1, d2 := work[1]-work[0], work[2]-work[1]
		if ratio := float64(d2) / float64(d1); ratio < 1.8 || ratio > 2.2 {
			t.Errorf("%s: work %v for %d, %d and %d bytes: the increase grew ×%.2f", name, work, n, 2*n, 4*n, ratio)
		}
	}
}

// endsAfter is a context whose Err is nil for its first looks, then
// Canceled.
type endsAfter struct {
	context.Context
	looks int
}

func (c *endsAfter) Err() error {
	if c.looks--; c.looks < 0 {
		return context.Canceled
	}
	return nil
}

func TestCountContext(t *testing.T) {
	text := randomText(9, "abcdefghijklmnopqrstuvwxyz ,.", 1<<20)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, stop := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer stop()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"canceled before", canceled, context.Canceled},
		{"deadline passed", expired, context.DeadlineExceeded},
		{"canceled during", &endsAfter{Context: context.Background(), looks: 3}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Counter{Context: tc.ctx}
			c.Add(text)
			if err := c.Err(); !errors.Is(err, tc.want) {
				t.Fatalf("Err = %v, want %v", err, tc.want)
			}
			// Counting stopped within a look's worth of work.
			if c.work > 4*checkWork+maxPiece {
				t.Errorf("counted on: %d work after the context ended", c.work)
			}
			// What was not encoded is counted at the measured rate.
			if got := c.Tokens(); c.rest != len(text)-c.encoded || got < len(text)/4 {
				t.Errorf("%d tokens, %d bytes encoded and %d not, of %d", got, c.encoded, c.rest, len(text))
			}
			work := c.work
			c.Add("more text")
			if c.work != work || c.rest != len(text)+9-c.encoded || !errors.Is(c.Err(), tc.want) {
				t.Errorf("encoding went on after the context ended")
			}
		})
	}
	if _, err := Count(canceled, "hello"); !errors.Is(err, context.Canceled) {
		t.Errorf("Count with a canceled context: %v", err)
	}
}

// FuzzCount: counting never panics, does not depend on whether a context
// is given, and equals tiktoken when no piece is chunked.
func FuzzCount(f *testing.F) {
	for _, text := range pieceTexts {
		f.Add(text)
	}
	f.Add(strings.Repeat("ab", maxPiece))
	f.Fuzz(func(t *testing.T, text string) {
		want := count(t, text)
		ctx, cancel := context.WithTimeout(context.Background(), 100*365*24*time.Hour)
		defer cancel()
		if got, err := Count(ctx, text); got != want || err != nil {
			t.Errorf("with a context: %d (%v), without: %d", got, err, want)
		}
		if len(text) <= maxPiece {
			if ref := referenceCount(t, text); want != ref {
				t.Errorf("Count(%q) = %d, tiktoken %d", text, want, ref)
			}
		}
	})
}

func BenchmarkCount(b *testing.B) {
	for _, bc := range []struct {
		name string
		text string
	}{
		{"one-letter-4MB", strings.Repeat("a", 4<<20)},
		{"one-letter-128KiB", strings.Repeat("a", 128<<10)},
		{"random-lower-128KiB", randomText(10, "abcdefghijklmnopqrstuvwxyz", 128<<10)},
		{"prose-128KiB", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 128<<10/45)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := vocab(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Count(b.Context(), bc.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Walked looks at the context as Add does, past the budget too: a walk
// over a request stops when the context ends, even once encoding has.
func TestWalked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := Counter{Context: ctx, Budget: 1}
	c.Add("hello world")
	if !c.Walked(1) {
		t.Fatal("stopped before the context ended")
	}
	cancel()
	for i := 0; c.Walked(1000); i++ {
		if i > checkWork/1000+1 {
			t.Fatal("the walk went on past checkWork after the context ended")
		}
	}
	if c.Err() == nil {
		t.Error("Err is nil after the walk stopped")
	}
	n := c.Tokens()
	c.Add("more text")
	if c.Tokens() <= n {
		t.Error("text past the end is not counted")
	}
}
