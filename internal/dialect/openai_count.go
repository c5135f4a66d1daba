package dialect

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// countChatPrompt counts a Chat Completions request into c: message text
// and parts, tool calls, tool definitions, plus framing.
func countChatPrompt(c *tokens.Counter, body []byte) {
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
