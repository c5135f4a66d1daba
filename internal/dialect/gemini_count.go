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
	// The counter reads what gjson finds before returning: no copy of the
	// body is needed. Indexes count from the first byte parsed.
	start := len(body) - len(strings.TrimLeft(unsafeString(body), " \t\r\n"))
	w := geminiWalk{c: c, stop: -1}
	gjson.Parse(unsafeString(body[start:])).ForEach(func(k, v gjson.Result) bool {
		if !w.step(v) {
			return false
		}
		switch k.Str {
		case "systemInstruction", "system_instruction":
			v.ForEach(func(k, v gjson.Result) bool {
				if k.Str == "parts" {
					w.parts(v, true)
				}
				return w.going()
			})
		case "contents":
			v.ForEach(func(_, turn gjson.Result) bool {
				if !w.step(turn) {
					return false
				}
				c.AddTokens(4) // role and turn framing
				turn.ForEach(func(k, v gjson.Result) bool {
					if k.Str == "parts" {
						w.parts(v, true)
					}
					return w.going()
				})
				return w.going()
			})
		case "tools":
			v.ForEach(func(_, t gjson.Result) bool {
				t.ForEach(func(k, v gjson.Result) bool {
					if k.Str == "functionDeclarations" || k.Str == "function_declarations" {
						v.ForEach(func(_, f gjson.Result) bool {
							if w.step(f) {
								w.declaration(f)
							}
							return w.going()
						})
					}
					return w.going()
				})
				return w.going()
			})
		}
		return w.going()
	})
	if w.stop >= 0 {
		c.Add(unsafeString(body[min(start+w.stop, len(body)):])) // counted unread
	}
	c.AddTokens(3)
}

// geminiWalk is a walk over a generateContent request, stopped at the
// index of the value it did not read once the counter's context ended.
type geminiWalk struct {
	c    *tokens.Counter
	stop int // -1 while going
}

// step records the reading of v and reports whether the walk goes on.
func (w *geminiWalk) step(v gjson.Result) bool {
	if w.stop >= 0 {
		return false
	}
	if !w.c.Walked(len(v.Raw)) {
		w.stop = v.Index
		return false
	}
	return true
}

func (w *geminiWalk) going() bool { return w.stop < 0 }

// parts counts a turn's parts. A function's response may hold parts of
// its own (an image it returned, in a FunctionResponsePart), read when
// top is set: Google nests no deeper.
func (w *geminiWalk) parts(parts gjson.Result, top bool) {
	c := w.c
	parts.ForEach(func(_, p gjson.Result) bool {
		if !w.step(p) {
			return false
		}
		p.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "text":
				c.Add(v.Str)
			case "functionCall", "function_call", "functionResponse", "function_response":
				// A call's name and arguments; a response's name, response
				// and parts.
				call := k.Str == "functionCall" || k.Str == "function_call"
				v.ForEach(func(k, v gjson.Result) bool {
					switch {
					case k.Str == "name":
						c.Add(v.Str)
					case call && k.Str == "args", !call && k.Str == "response":
						c.Add(v.Raw)
					case !call && top && k.Str == "parts":
						w.parts(v, false)
					}
					return w.going()
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
			return w.going()
		})
		return w.going()
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

// declaration counts a function declaration: its name, description, and
// parameters in either form (parametersJsonSchema by its JSON name, else
// its proto name).
func (w *geminiWalk) declaration(f gjson.Result) {
	var schema, proto gjson.Result
	f.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "name", "description":
			w.c.Add(v.Str)
		case "parameters":
			w.c.Add(v.Raw)
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
	w.c.Add(schema.Raw)
}
