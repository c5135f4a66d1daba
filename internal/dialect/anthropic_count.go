package dialect

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// countMessagesPrompt counts a Messages (or count_tokens) request into c:
// system, message text, tool calls and results, tool definitions, plus a
// few tokens of framing per message.
func countMessagesPrompt(c *tokens.Counter, body []byte) {
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
