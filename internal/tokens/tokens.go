// Package tokens estimates prompt sizes offline, for count_tokens on models
// whose upstream has no counting endpoint, and for streams whose usage never
// arrived. It uses the o200k_base encoding embedded in the binary (no
// download at run time); Claude's tokenizer is different, so counts for
// Claude-family prompts are estimates.
//
// Memory is bounded whatever the input: text is encoded in pieces of at
// most pieceBytes (the encoder's working memory grows with its input, to
// gigabytes for a 31 MB prompt), and a Counter given a budget encodes at
// most that many bytes, extrapolating the rest at the measured rate.
package tokens

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/tidwall/gjson"
)

// encoding is loaded on first use: about 0.2 s and 20 MiB that a gateway
// which never counts should not pay at start.
var encoding = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	return tiktoken.GetEncoding("o200k_base")
})

// imageTokens is what one image counts for when its size is unknown (a
// typical 1092×1092 image is about 1,600 tokens for Claude).
const imageTokens = 1600

// pieceBytes bounds what the encoder is given at once. Pieces are cut at
// white space where there is some, so counts match a whole-text encoding
// but for the rare token that spans a cut.
const pieceBytes = 32 << 10

// Count returns the number of tokens in text, or an estimate of four bytes
// a token if the encoding cannot be loaded.
func Count(text string) int {
	var c Counter
	c.Add(text)
	return c.Tokens()
}

// Counter adds up the tokens of many texts. With a Budget, it encodes at
// most Budget bytes and counts the rest at the rate measured on those
// (never less than one token per four bytes). The zero value counts
// everything exactly.
type Counter struct {
	Budget  int // bytes to encode; 0 for no limit
	encoded int // bytes encoded
	tokens  int // tokens in those bytes
	rest    int // bytes past the budget, not encoded
	extra   int // tokens counted without encoding (images, documents)
}

// Add counts text.
func (c *Counter) Add(text string) {
	enc, err := encoding()
	for len(text) > 0 {
		if c.Budget > 0 && c.encoded >= c.Budget {
			c.rest += len(text)
			return
		}
		piece := cut(text, pieceBytes)
		text = text[len(piece):]
		c.encoded += len(piece)
		if err != nil {
			c.tokens += (len(piece) + 3) / 4
			continue
		}
		c.tokens += len(enc.EncodeOrdinary(piece))
	}
}

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

// cut returns the first piece of text: at most n bytes, ending just before
// white space when there is some in its second half (the encoder joins a
// space to the word after it), else on a character boundary.
func cut(text string, n int) string {
	if len(text) <= n {
		return text
	}
	if i := strings.LastIndexFunc(text[n/2:n], unicode.IsSpace); i > 0 {
		return text[:n/2+i]
	}
	end := n
	for end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	if end == 0 {
		end = n
	}
	return text[:end]
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
