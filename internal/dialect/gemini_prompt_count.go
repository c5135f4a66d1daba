package dialect

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// countGeminiPrompt counts a Gemini generate request's prompt with the
// tokenizer (a count body, whole or wrapped, is read as the request it
// counts): the text of its contents and system instruction, function
// calls and results, and the tools' declarations; inline data counts by
// its size.
func countGeminiPrompt(c *tokens.Counter, body []byte) {
	req := gjson.ParseBytes(body)
	if inner := req.Get("generateContentRequest"); inner.IsObject() {
		req = inner
	}
	parts := func(content gjson.Result) {
		content.Get("parts").ForEach(func(_, p gjson.Result) bool {
			c.Add(p.Get("text").Str)
			if fc := p.Get("functionCall"); fc.Exists() {
				c.Add(fc.Get("name").Str)
				c.Add(fc.Get("args").Raw)
			}
			if fr := p.Get("functionResponse"); fr.Exists() {
				c.Add(fr.Get("name").Str)
				c.Add(fr.Get("response").Raw)
			}
			if d := p.Get("inlineData.data"); d.Exists() {
				c.AddTokens(258 + len(d.Str)/1024) // Gemini bills an image at 258 tokens
			}
			return true
		})
	}
	req.Get("contents").ForEach(func(_, m gjson.Result) bool {
		c.AddTokens(3)
		parts(m)
		return true
	})
	parts(req.Get("systemInstruction"))
	req.Get("tools").ForEach(func(_, t gjson.Result) bool {
		t.Get("functionDeclarations").ForEach(func(_, f gjson.Result) bool {
			c.Add(f.Get("name").Str)
			c.Add(f.Get("description").Str)
			c.Add(f.Get("parameters").Raw)
			return true
		})
		return true
	})
}
