package dialect

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// countResponsesPrompt counts a Responses request into c: the
// instructions, the input (a string, or items: messages and their parts,
// function calls and their outputs, reasoning summaries), and the tools.
//
// The walk is linear in the body whatever its shape (see promptWalk),
// and stops when c's context ends.
func countResponsesPrompt(c *tokens.Counter, body []byte) {
	walkPrompt(c, body, func(w *promptWalk, key string, v gjson.Result) {
		switch key {
		case "instructions":
			c.Add(v.Str)
		case "input":
			if v.Type == gjson.String {
				c.Add(v.Str)
			}
			w.items(v, func(it gjson.Result) { responsesItem(w, it) })
		case "tools":
			w.items(v, func(t gjson.Result) { w.tool(t, "parameters") })
		}
	})
}

// responsesItem counts an input item (a string input is one message).
func responsesItem(w *promptWalk, it gjson.Result) {
	c := w.c
	c.AddTokens(4) // item framing
	// The item's type may come after its other members: they are noted in
	// one pass, and counted by the type.
	var typ string
	var name, arguments, input, output, summary, content gjson.Result
	w.members(it, func(k string, v gjson.Result) {
		switch k {
		case "type":
			typ = v.Str
		case "name":
			name = v
		case "arguments":
			arguments = v
		case "input":
			input = v
		case "output":
			output = v
		case "summary":
			summary = v
		case "content":
			content = v
		}
	})
	switch typ {
	case "function_call", "custom_tool_call":
		c.Add(name.Str)
		c.Add(arguments.Str)
		c.Add(input.Str)
	case "function_call_output", "custom_tool_call_output":
		responsesParts(w, output)
	case "reasoning":
		responsesParts(w, summary)
	default: // messages, typed or not
		responsesParts(w, content)
	}
}

// responsesParts counts an item's content, output or summary: a string,
// or parts.
func responsesParts(w *promptWalk, v gjson.Result) {
	c := w.c
	w.content(v, func(p gjson.Result) {
		var typ string
		var text, refusal, data gjson.Result
		w.members(p, func(k string, v gjson.Result) {
			switch k {
			case "type":
				typ = v.Str
			case "text":
				text = v
			case "refusal":
				refusal = v
			case "file_data":
				data = v
			}
		})
		switch typ {
		case "input_text", "output_text", "text", "summary_text", "reasoning_text", "refusal":
			c.Add(text.Str)
			c.Add(refusal.Str)
		case "input_image":
			c.AddTokens(imageTokens)
		case "input_file":
			c.AddTokens(base64Tokens(len(data.Str)))
		}
	})
}
