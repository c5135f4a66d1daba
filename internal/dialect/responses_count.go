package dialect

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// countResponsesPrompt counts a Responses request into c: the
// instructions, the input (a string, or items: messages and their parts,
// function calls and their outputs, reasoning summaries), and the tools.
func countResponsesPrompt(c *tokens.Counter, body []byte) {
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
