package dialect

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/tokens"
)

// countGeminiPrompt counts a generateContent request into c: the
// systemInstruction, the contents (text, function calls and responses,
// code and its results, inline and referenced data), and the function
// declarations, plus framing per turn.
//
// Google's API takes the proto field names too (system_instruction,
// inline_data, mime_type…), and its own examples use them, so both
// spellings count.
func countGeminiPrompt(c *tokens.Counter, body []byte) {
	// The counter reads what gjson finds before returning: no copy of the
	// body is needed.
	gjson.Parse(unsafeString(body)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "systemInstruction", "system_instruction":
			geminiParts(c, v.Get("parts"))
		case "contents":
			v.ForEach(func(_, turn gjson.Result) bool {
				c.AddTokens(4) // role and turn framing
				geminiParts(c, turn.Get("parts"))
				return true
			})
		case "tools":
			v.ForEach(func(_, t gjson.Result) bool {
				geminiMember(t, "functionDeclarations", "function_declarations").ForEach(func(_, f gjson.Result) bool {
					c.Add(f.Get("name").Str)
					c.Add(f.Get("description").Str)
					c.Add(f.Get("parameters").Raw)
					c.Add(geminiMember(f, "parametersJsonSchema", "parameters_json_schema").Raw)
					return true
				})
				return true
			})
		}
		return true
	})
	c.AddTokens(3)
}

// geminiParts counts a turn's parts. A function's response may hold
// parts of its own (an image it returned).
func geminiParts(c *tokens.Counter, parts gjson.Result) {
	parts.ForEach(func(_, p gjson.Result) bool {
		p.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "text":
				c.Add(v.Str)
			case "functionCall", "function_call":
				c.Add(v.Get("name").Str)
				c.Add(v.Get("args").Raw)
			case "functionResponse", "function_response":
				c.Add(v.Get("name").Str)
				c.Add(v.Get("response").Raw)
				geminiParts(c, v.Get("parts"))
			case "executableCode", "executable_code":
				c.Add(v.Get("code").Str)
			case "codeExecutionResult", "code_execution_result":
				c.Add(v.Get("output").Str)
			case "inlineData", "inline_data":
				// An image counts as in every dialect, whatever its size;
				// other data (a PDF, audio, video) by its size.
				if geminiImage(v) {
					c.AddTokens(imageTokens)
				} else {
					c.AddTokens(base64Tokens(len(v.Get("data").Str)))
				}
			case "fileData", "file_data":
				// Referenced by URI: its size is unknown here.
				if geminiImage(v) {
					c.AddTokens(imageTokens)
				} else {
					c.AddTokens(base64Tokens(0))
				}
			}
			return true
		})
		return true
	})
}

// geminiImage reports whether a blob or file reference is an image.
func geminiImage(v gjson.Result) bool {
	return strings.HasPrefix(geminiMember(v, "mimeType", "mime_type").Str, "image/")
}

// geminiMember is obj's member by its JSON name, else by its proto name.
func geminiMember(obj gjson.Result, json, proto string) gjson.Result {
	if r := obj.Get(json); r.Exists() {
		return r
	}
	return obj.Get(proto)
}
