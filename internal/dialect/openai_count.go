package dialect

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// countChatPrompt counts a Chat Completions request into c: message text
// and parts, tool calls, tool definitions, plus framing.
//
// The walk is linear in the body whatever its shape (see promptWalk),
// and stops when c's context ends.
func countChatPrompt(c *tokens.Counter, body []byte) {
	walkPrompt(c, body, func(w *promptWalk, key string, v gjson.Result) {
		switch key {
		case "messages":
			w.items(v, func(m gjson.Result) {
				c.AddTokens(4)
				w.members(m, func(k string, v gjson.Result) {
					switch k {
					case "content":
						w.content(v, func(p gjson.Result) { chatPart(w, p) })
					case "tool_calls":
						w.items(v, func(tc gjson.Result) { chatCall(w, tc) })
					}
				})
			})
		case "tools":
			w.items(v, func(t gjson.Result) {
				w.members(t, func(k string, v gjson.Result) {
					if k == "function" {
						w.tool(v, "parameters")
					}
				})
			})
		}
	})
}

// chatPart counts a message's content part.
func chatPart(w *promptWalk, p gjson.Result) {
	var typ string
	var text, file gjson.Result
	w.members(p, func(k string, v gjson.Result) {
		switch k {
		case "type":
			typ = v.Str
		case "text":
			text = v
		case "file":
			file = v
		}
	})
	switch typ {
	case "text":
		w.c.Add(text.Str)
	case "image_url", "input_image":
		w.c.AddTokens(imageTokens)
	case "file":
		var data string
		w.members(file, func(k string, v gjson.Result) {
			if k == "file_data" {
				data = v.Str
			}
		})
		w.c.AddTokens(base64Tokens(len(data)))
	}
}

// chatCall counts a tool call: its function's name and arguments.
func chatCall(w *promptWalk, tc gjson.Result) {
	w.members(tc, func(k string, v gjson.Result) {
		if k != "function" {
			return
		}
		w.members(v, func(k string, v gjson.Result) {
			if k == "name" || k == "arguments" {
				w.c.Add(v.Str)
			}
		})
	})
}
