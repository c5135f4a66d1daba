// Package tokens estimates prompt sizes offline, for count_tokens on models
// whose upstream has no counting endpoint. It uses the o200k_base encoding
// embedded in the binary (no download at run time); Claude's tokenizer is
// different, so counts for Claude-family prompts are estimates.
package tokens

import (
	"sync"

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

// Count returns the number of tokens in text, or an estimate of four bytes
// a token if the encoding cannot be loaded.
func Count(text string) int {
	enc, err := encoding()
	if err != nil {
		return (len(text) + 3) / 4
	}
	return len(enc.EncodeOrdinary(text))
}

// CountMessagesRequest estimates the input tokens of an Anthropic Messages
// (or count_tokens) request: system, message text, tool calls and results,
// tool definitions, plus a few tokens of framing per message.
func CountMessagesRequest(body []byte) int {
	n := 0
	add := func(s string) { n += Count(s) }
	var content func(c gjson.Result)
	content = func(c gjson.Result) {
		if c.Type == gjson.String {
			add(c.Str)
			return
		}
		for _, b := range c.Array() {
			switch b.Get("type").String() {
			case "text":
				add(b.Get("text").Str)
			case "image":
				n += imageTokens
			case "document":
				add(b.Get("source.data").Str)
			case "tool_use":
				add(b.Get("name").Str)
				add(b.Get("input").Raw)
			case "tool_result":
				content(b.Get("content"))
			case "thinking":
				add(b.Get("thinking").Str)
			}
		}
	}
	content(gjson.GetBytes(body, "system"))
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		n += 4 // role and turn framing
		content(m.Get("content"))
	}
	for _, t := range gjson.GetBytes(body, "tools").Array() {
		add(t.Get("name").Str)
		add(t.Get("description").Str)
		add(t.Get("input_schema").Raw)
	}
	return n + 3
}
