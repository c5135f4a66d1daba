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
// extrapolating the rest at the measured rate.
package tokens

import (
	"context"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// imageTokens is what one image counts for when its size is unknown (a
// typical 1092×1092 image is about 1,600 tokens for Claude).
const imageTokens = 1600

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
	switch {
	case c.err != nil || c.Budget > 0 && c.encoded >= c.Budget:
		return false
	case c.Context == nil || c.work < c.checkAt:
		return true
	}
	c.checkAt = c.work + checkWork
	c.err = c.Context.Err()
	return c.err == nil
}

// Err returns the context's error if encoding stopped because it ended:
// Tokens is then partly an estimate, as past a budget.
func (c *Counter) Err() error { return c.err }

// AddTokens counts n tokens that are not text (an image).
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

// base64Tokens is what a base64 payload of n bytes counts for (a PDF or an
// image given inline): a flat part and a part that grows with its size,
// as the gateway's reservations weigh them.
func base64Tokens(n int) int { return 2000 + n/256 }

// CountMessagesRequest estimates the input tokens of an Anthropic Messages
// (or count_tokens) request: system, message text, tool calls and results,
// tool definitions, plus a few tokens of framing per message.
func CountMessagesRequest(body []byte) int {
	var c Counter
	AddMessagesRequest(&c, body)
	return c.Tokens()
}

// AddMessagesRequest counts an Anthropic Messages request into c.
func AddMessagesRequest(c *Counter, body []byte) {
	var content func(v gjson.Result)
	content = func(v gjson.Result) {
		if v.Type == gjson.String {
			c.Add(v.Str)
			return
		}
		v.ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").String() {
			case "text":
				c.Add(b.Get("text").Str)
			case "image":
				c.AddTokens(imageTokens)
			case "document":
				if src := b.Get("source"); src.Get("type").Str == "base64" {
					c.AddTokens(base64Tokens(len(src.Get("data").Str)))
				} else {
					c.Add(src.Get("data").Str)
					content(src.Get("content"))
				}
			case "tool_use", "server_tool_use":
				c.Add(b.Get("name").Str)
				c.Add(b.Get("input").Raw)
			case "tool_result":
				content(b.Get("content"))
			case "thinking":
				c.Add(b.Get("thinking").Str)
			}
			return true
		})
	}
	content(gjson.GetBytes(body, "system"))
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		c.AddTokens(4) // role and turn framing
		content(m.Get("content"))
		return true
	})
	gjson.GetBytes(body, "tools").ForEach(func(_, t gjson.Result) bool {
		c.Add(t.Get("name").Str)
		c.Add(t.Get("description").Str)
		c.Add(t.Get("input_schema").Raw)
		return true
	})
	c.AddTokens(3)
}

// AddChatRequest counts an OpenAI Chat Completions request into c:
// message text and parts, tool calls, tool definitions, plus framing.
func AddChatRequest(c *Counter, body []byte) {
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		c.AddTokens(4)
		v := m.Get("content")
		if v.Type == gjson.String {
			c.Add(v.Str)
		}
		v.ForEach(func(_, p gjson.Result) bool {
			switch p.Get("type").Str {
			case "text":
				c.Add(p.Get("text").Str)
			case "image_url", "input_image":
				c.AddTokens(imageTokens)
			case "file":
				c.AddTokens(base64Tokens(len(p.Get("file.file_data").Str)))
			}
			return true
		})
		m.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			c.Add(tc.Get("function.name").Str)
			c.Add(tc.Get("function.arguments").Str)
			return true
		})
		return true
	})
	gjson.GetBytes(body, "tools").ForEach(func(_, t gjson.Result) bool {
		c.Add(t.Get("function.name").Str)
		c.Add(t.Get("function.description").Str)
		c.Add(t.Get("function.parameters").Raw)
		return true
	})
	c.AddTokens(3)
}

// AddResponsesRequest counts an OpenAI Responses request into c: the
// instructions, the input (a string, or items: messages and their parts,
// function calls and their outputs, reasoning summaries), and the tools.
func AddResponsesRequest(c *Counter, body []byte) {
	c.Add(gjson.GetBytes(body, "instructions").Str)
	var parts func(v gjson.Result)
	parts = func(v gjson.Result) {
		if v.Type == gjson.String {
			c.Add(v.Str)
			return
		}
		v.ForEach(func(_, p gjson.Result) bool {
			switch p.Get("type").Str {
			case "input_text", "output_text", "text", "summary_text", "reasoning_text", "refusal":
				c.Add(p.Get("text").Str)
				c.Add(p.Get("refusal").Str)
			case "input_image":
				c.AddTokens(imageTokens)
			case "input_file":
				c.AddTokens(base64Tokens(len(p.Get("file_data").Str)))
			}
			return true
		})
	}
	in := gjson.GetBytes(body, "input")
	if in.Type == gjson.String {
		c.Add(in.Str)
	}
	in.ForEach(func(_, it gjson.Result) bool {
		c.AddTokens(4) // item framing
		switch it.Get("type").Str {
		case "function_call", "custom_tool_call":
			c.Add(it.Get("name").Str)
			c.Add(it.Get("arguments").Str)
			c.Add(it.Get("input").Str)
		case "function_call_output", "custom_tool_call_output":
			parts(it.Get("output"))
		case "reasoning":
			parts(it.Get("summary"))
		default: // messages, typed or not
			parts(it.Get("content"))
		}
		return true
	})
	gjson.GetBytes(body, "tools").ForEach(func(_, t gjson.Result) bool {
		c.Add(t.Get("name").Str)
		c.Add(t.Get("description").Str)
		c.Add(t.Get("parameters").Raw)
		return true
	})
	c.AddTokens(3)
}
