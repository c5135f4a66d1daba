// Package tokens estimates prompt sizes offline, for count_tokens on models
// whose upstream has no counting endpoint, and for streams whose usage never
// arrived. It uses the o200k_base encoding embedded in the binary (no
// download at run time); Claude's tokenizer is different, so counts for
// Claude-family prompts are estimates.
//
// Counting is linear in the text whatever the text, and stops when its
// context ends: the text is cut into pieces in one pass (split.go), and
// each piece is merged in bounded chunks (bpe.go). Counts equal tiktoken's
// but for pieces longer than maxPiece bytes, which ordinary text does not
// make. A Counter given a budget encodes at most that many bytes,
// extrapolating the rest at the measured rate. What a request of each
// protocol holds is read into a Counter by that protocol's dialect
// (dialect.Dialect.CountPrompt).
package tokens

import (
	"context"
	"unicode/utf8"
)

// checkWork is how much work (bytes read and merge steps) a Counter does
// between two looks at its context: some tens of microseconds.
const checkWork = 64 << 10

// Count returns the number of tokens in text, or an estimate of four bytes
// a token if the encoding cannot be loaded. It stops with ctx's error
// when ctx ends (the count is then partly an estimate).
func Count(ctx context.Context, text string) (int, error) {
	c := Counter{Context: ctx}
	c.Add(text)
	return c.Tokens(), c.Err()
}

// Counter adds up the tokens of many texts. With a Budget, it encodes at
// most Budget bytes and counts the rest at the rate measured on those
// (never less than one token per four bytes). With a Context, it stops
// encoding when the context ends, counts what it did not encode the same
// way, and Err says so. The zero value counts everything, to the end.
type Counter struct {
	Context context.Context // nil for no end
	Budget  int             // bytes to encode; 0 for no limit

	encoded int   // bytes encoded
	tokens  int   // tokens in those bytes
	rest    int   // bytes past the budget or the context's end, not encoded
	extra   int   // tokens counted without encoding (images, documents)
	err     error // the context's, once it ended

	merger
	chunk       string // the last chunk of a long piece, and its tokens:
	chunkTokens int    // a run of one character is the same chunk again
	work        int    // bytes read and merge steps
	checkAt     int    // work at which to look at the context next
}

// Add counts text.
func (c *Counter) Add(text string) {
	v, err := vocab()
	if err != nil {
		c.encoded += len(text)
		c.tokens += (len(text) + 3) / 4
		return
	}
	for len(text) > 0 && c.going() {
		k := pieceLen(text)
		piece := text[:k]
		text = text[k:]
		c.work += k
		if k <= maxPiece {
			c.tokens += c.piece(piece, v)
			c.encoded += k
			continue
		}
		for len(piece) > 0 && c.going() { // in chunks
			n := chunkLen(piece)
			if chunk := piece[:n]; chunk != c.chunk {
				c.chunk, c.chunkTokens = chunk, c.piece(chunk, v)
			}
			c.tokens += c.chunkTokens
			c.encoded += n
			c.work += n
			piece = piece[n:]
		}
		c.rest += len(piece)
	}
	c.rest += len(text)
}

// piece returns the tokens of a piece of at most maxPiece bytes.
func (c *Counter) piece(piece string, v *vocabulary) int {
	if !utf8.ValidString(piece) {
		piece = string([]rune(piece)) // as tiktoken-go reads it: U+FFFD for each bad byte
	}
	if _, ok := v.ranks[piece]; ok || len(piece) < 2 {
		return 1
	}
	before := c.steps
	n := c.merger.count(piece, v)
	c.work += c.steps - before
	return n
}

// going reports whether encoding goes on: the budget is not spent and
// the context has not ended, looking at it when checkWork has been done
// since the last look.
func (c *Counter) going() bool {
	if c.Budget > 0 && c.encoded >= c.Budget {
		return false
	}
	return c.live()
}

// live looks at the context when checkWork has been done since the last
// look, and reports whether it has not ended.
func (c *Counter) live() bool {
	if c.err != nil || c.Context == nil || c.work < c.checkAt {
		return c.err == nil
	}
	c.checkAt = c.work + checkWork
	c.err = c.Context.Err()
	return c.err == nil
}

// Walked records n bytes of a request read to find its texts, and reports
// whether counting goes on: false once the context has ended (Err then
// says so), whatever the budget. Reading a request costs time as encoding
// does, so a prompt counter walking one stops when Walked is false, and
// passes what it did not read to Add, which counts it unencoded at the
// measured rate.
func (c *Counter) Walked(n int) bool {
	c.work += n
	return c.live()
}

// Err returns the context's error if encoding stopped because it ended:
// Tokens is then partly an estimate, as past a budget.
func (c *Counter) Err() error { return c.err }

// AddTokens counts n tokens that are not text (an image, a document).
func (c *Counter) AddTokens(n int) { c.extra += n }

// Tokens is the count so far.
func (c *Counter) Tokens() int {
	n := c.tokens + c.extra
	if c.rest > 0 {
		rate := max(float64(c.tokens)/float64(max(c.encoded, 1)), 0.25)
		n += int(float64(c.rest)*rate + 0.5)
	}
	return n
}
