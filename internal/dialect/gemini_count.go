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
//
// The walk is linear in the body whatever its shape: every object is
// read once, member by member, nesting is followed only as deep as
// Google's requests go, and the walk stops when c's context ends (the
// rest of the body is then counted unread, at the measured rate).
func countGeminiPrompt(c *tokens.Counter, body []byte) {
	walkPrompt(c, body, func(w *promptWalk, key string, v gjson.Result) {
		switch key {
		case "systemInstruction", "system_instruction":
			w.members(v, func(k string, v gjson.Result) {
				if k == "parts" {
					geminiParts(w, v, true)
				}
			})
		case "contents":
			w.items(v, func(turn gjson.Result) {
				c.AddTokens(4) // role and turn framing
				w.members(turn, func(k string, v gjson.Result) {
					if k == "parts" {
						geminiParts(w, v, true)
					}
				})
			})
		case "tools":
			w.members(v, func(_ string, t gjson.Result) {
				w.members(t, func(k string, v gjson.Result) {
					if k == "functionDeclarations" || k == "function_declarations" {
						w.items(v, func(f gjson.Result) { geminiDeclaration(c, f) })
					}
				})
			})
		}
	})
}

// geminiParts counts a turn's parts. A function's response may hold parts
// of its own (an image it returned, in a FunctionResponsePart), read when
// top is set: Google nests no deeper.
func geminiParts(w *promptWalk, parts gjson.Result, top bool) {
	c := w.c
	w.items(parts, func(p gjson.Result) {
		w.members(p, func(k string, v gjson.Result) {
			switch k {
			case "text":
				c.Add(v.Str)
			case "functionCall", "function_call", "functionResponse", "function_response":
				// A call's name and arguments; a response's name, response
				// and parts.
				call := k == "functionCall" || k == "function_call"
				w.members(v, func(k string, v gjson.Result) {
					switch {
					case k == "name":
						c.Add(v.Str)
					case call && k == "args", !call && k == "response":
						c.Add(v.Raw)
					case !call && top && k == "parts":
						geminiParts(w, v, false)
					}
				})
			case "executableCode", "executable_code":
				c.Add(v.Get("code").Str)
			case "codeExecutionResult", "code_execution_result":
				c.Add(v.Get("output").Str)
			case "inlineData", "inline_data":
				// An image counts as in every dialect, whatever its size;
				// other data (a PDF, audio, video) by its size.
				mime, data := geminiBlob(v)
				if strings.HasPrefix(mime, "image/") {
					c.AddTokens(imageTokens)
				} else {
					c.AddTokens(base64Tokens(len(data)))
				}
			case "fileData", "file_data":
				// Referenced by URI: its size is unknown here.
				if mime, _ := geminiBlob(v); strings.HasPrefix(mime, "image/") {
					c.AddTokens(imageTokens)
				} else {
					c.AddTokens(base64Tokens(0))
				}
			}
		})
	})
}

// geminiBlob reads a blob or a file reference in one pass: its MIME type
// (by its JSON name, else its proto name) and its inline data.
func geminiBlob(v gjson.Result) (mime, data string) {
	var proto string
	var json bool
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "mimeType":
			if !json {
				mime, json = v.Str, true
			}
		case "mime_type":
			if proto == "" {
				proto = v.Str
			}
		case "data":
			data = v.Str
		}
		return true
	})
	if !json {
		mime = proto
	}
	return mime, data
}

// geminiDeclaration counts a function declaration: its name,
// description, and parameters in either form (parametersJsonSchema by its
// JSON name, else its proto name).
func geminiDeclaration(c *tokens.Counter, f gjson.Result) {
	var schema, proto gjson.Result
	f.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "name", "description":
			c.Add(v.Str)
		case "parameters":
			c.Add(v.Raw)
		case "parametersJsonSchema":
			if !schema.Exists() {
				schema = v
			}
		case "parameters_json_schema":
			if !proto.Exists() {
				proto = v
			}
		}
		return true
	})
	if !schema.Exists() {
		schema = proto
	}
	c.Add(schema.Raw)
}
