package dialect

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// countMessagesPrompt counts a Messages (or count_tokens) request into c:
// system, message text, tool calls and results, documents, tool
// definitions, plus a few tokens of framing per message.
//
// The walk is linear in the body whatever its shape (see promptWalk),
// and stops when c's context ends.
func countMessagesPrompt(c *tokens.Counter, body []byte) {
	walkPrompt(c, body, func(w *promptWalk, key string, v gjson.Result) {
		switch key {
		case "system":
			messagesContent(w, v, 0)
		case "messages":
			w.items(v, func(m gjson.Result) {
				c.AddTokens(4) // role and turn framing
				w.members(m, func(k string, v gjson.Result) {
					if k == "content" {
						messagesContent(w, v, 0)
					}
				})
			})
		case "tools":
			w.items(v, func(t gjson.Result) { w.tool(t, "input_schema") })
		}
	})
}

// How deep content blocks nest in a Messages request: a message's blocks
// (level 0) hold tool results, whose blocks (level 1) hold documents,
// whose source's blocks (level 2) hold text and images. Blocks nested
// deeper are not read.
const (
	inResult   = 1
	inDocument = 2
)

// messagesContent counts content at the given level: a string, or blocks.
func messagesContent(w *promptWalk, v gjson.Result, level int) {
	c := w.c
	w.content(v, func(b gjson.Result) {
		// The block's type may come after its other members: they are
		// noted in one pass, and counted by the type.
		var typ string
		var text, thinking, name, input, source, content gjson.Result
		w.members(b, func(k string, v gjson.Result) {
			switch k {
			case "type":
				typ = v.String()
			case "text":
				text = v
			case "thinking":
				thinking = v
			case "name":
				name = v
			case "input":
				input = v
			case "source":
				source = v
			case "content":
				content = v
			}
		})
		switch typ {
		case "text":
			c.Add(text.Str)
		case "image":
			c.AddTokens(imageTokens)
		case "document":
			messagesDocument(w, source, level)
		case "tool_use", "server_tool_use":
			c.Add(name.Str)
			c.Add(input.Raw)
		case "tool_result":
			if level == 0 {
				messagesContent(w, content, inResult)
			}
		case "thinking":
			c.Add(thinking.Str)
		}
	})
}

// messagesDocument counts a document's source: base64 data by its size,
// text data by its tokens, and content blocks unless the document is
// itself in a document's content.
func messagesDocument(w *promptWalk, source gjson.Result, level int) {
	var typ string
	var data, content gjson.Result
	w.members(source, func(k string, v gjson.Result) {
		switch k {
		case "type":
			typ = v.Str
		case "data":
			data = v
		case "content":
			content = v
		}
	})
	if typ == "base64" {
		w.c.AddTokens(base64Tokens(len(data.Str)))
		return
	}
	w.c.Add(data.Str)
	if level < inDocument {
		messagesContent(w, content, inDocument)
	}
}
