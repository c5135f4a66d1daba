package dialect

import (
	"context"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/tokens"
)

// textTokens is what the tokenizer makes of each text, added up: a
// counter counts each text it is given on its own.
func textTokens(t testing.TB, texts ...string) int {
	t.Helper()
	n := 0
	for _, s := range texts {
		k, err := tokens.Count(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}

func countWith(count func(*tokens.Counter, []byte), body string) int {
	var c tokens.Counter
	count(&c, []byte(body))
	return c.Tokens()
}

// Each dialect's prompt counter reads its protocol's text, tool calls and
// definitions, gives images and documents their weights, and adds 4
// tokens of framing a turn and 3 a request.
func TestCountPrompt(t *testing.T) {
	pdf := strings.Repeat("JVBERi0x", 640) // 5,120 base64 bytes
	tests := []struct {
		name  string
		count func(*tokens.Counter, []byte)
		body  string
		texts []string // what the tokenizer reads
		extra int      // framing, images, documents
	}{
		{"messages: text", countMessagesPrompt, `{"messages":[{"role":"user","content":"hello world"}]}`,
			[]string{"hello world"}, 4 + 3},
		{"messages: system, image, tool", countMessagesPrompt, `{"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hello world"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]}],"tools":[{"name":"f","description":"does f","input_schema":{"type":"object"}}]}`,
			[]string{"be brief", "hello world", "f", "does f", `{"type":"object"}`}, imageTokens + 4 + 3},
		{"messages: document, tool use and result, thinking", countMessagesPrompt, `{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + pdf + `"}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"look it up","signature":"x"},{"type":"tool_use","id":"t","name":"lookup","input":{"q":"x"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"found"}]}]}]}`,
			[]string{"look it up", "lookup", `{"q":"x"}`, "found"}, base64Tokens(len(pdf)) + 3*4 + 3},
		{"chat: text, tool call, image", countChatPrompt, `{"messages":[{"role":"user","content":"hello world"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":[{"type":"text","text":"hello world"},{"type":"image_url","image_url":{"url":"data:x"}}]}],"tools":[{"type":"function","function":{"name":"g","description":"does g","parameters":{"type":"object"}}}]}`,
			[]string{"hello world", "f", "{}", "hello world", "g", "does g", `{"type":"object"}`}, imageTokens + 3*4 + 3},
		{"chat: file", countChatPrompt, `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:application/pdf;base64,` + pdf + `"}}]}]}`,
			nil, base64Tokens(len("data:application/pdf;base64,"+pdf)) + 4 + 3},
		// A string input is one message, framed as one.
		{"responses: string input", countResponsesPrompt, `{"instructions":"be brief","input":"hello world"}`,
			[]string{"be brief", "hello world"}, 4 + 3},
		{"responses: items", countResponsesPrompt, `{"input":[{"role":"user","content":[{"type":"input_text","text":"hello world"},{"type":"input_image","image_url":"data:x"}]},{"type":"reasoning","summary":[{"type":"summary_text","text":"think"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"done"}],"tools":[{"type":"function","name":"f","description":"does f","parameters":{"type":"object"}}]}`,
			[]string{"hello world", "think", "f", "{}", "done", "f", "does f", `{"type":"object"}`}, imageTokens + 4*4 + 3},
		{"gemini: text", countGeminiPrompt, `{"contents":[{"role":"user","parts":[{"text":"hello world"}]}]}`,
			[]string{"hello world"}, 4 + 3},
		{"gemini: system instruction", countGeminiPrompt, `{"systemInstruction":{"parts":[{"text":"be brief"},{"text":"be kind"}]},"contents":[{"role":"user","parts":[{"text":"hello world"}]}]}`,
			[]string{"be brief", "be kind", "hello world"}, 4 + 3},
		{"gemini: function call and response", countGeminiPrompt, `{"contents":[{"role":"user","parts":[{"text":"weather?"}]},{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"}]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}}]}]}`,
			[]string{"weather?", "get_weather", `{"city":"Paris"}`, "get_weather", `{"temp":21}`}, 3*4 + 3},
		{"gemini: a function response with an image", countGeminiPrompt, `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"shot","response":{"ok":true},"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBOR"}}]}}]}]}`,
			[]string{"shot", `{"ok":true}`}, imageTokens + 4 + 3},
		{"gemini: inline data", countGeminiPrompt, `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/jpeg","data":"` + pdf + `"}},{"inlineData":{"mimeType":"application/pdf","data":"` + pdf + `"}},{"text":"compare"}]}]}`,
			[]string{"compare"}, imageTokens + base64Tokens(len(pdf)) + 4 + 3},
		{"gemini: file data", countGeminiPrompt, `{"contents":[{"role":"user","parts":[{"fileData":{"mimeType":"image/png","fileUri":"gs://b/x.png"}},{"fileData":{"mimeType":"video/mp4","fileUri":"https://example.com/v.mp4"}}]}]}`,
			nil, imageTokens + base64Tokens(0) + 4 + 3},
		{"gemini: code execution", countGeminiPrompt, `{"contents":[{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"print(1+1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"2"}}]}]}`,
			[]string{"print(1+1)", "2"}, 4 + 3},
		{"gemini: thoughts", countGeminiPrompt, `{"contents":[{"role":"model","parts":[{"text":"let me think","thought":true},{"text":"yes"}]}]}`,
			[]string{"let me think", "yes"}, 4 + 3},
		{"gemini: function declarations", countGeminiPrompt, `{"contents":[],"tools":[{"functionDeclarations":[{"name":"f","description":"does f","parameters":{"type":"OBJECT"}},{"name":"g","parametersJsonSchema":{"type":"object"}}]},{"googleSearch":{}}]}`,
			[]string{"f", "does f", `{"type":"OBJECT"}`, "g", `{"type":"object"}`}, 3},
		{"gemini: proto field names", countGeminiPrompt, `{"system_instruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"inline_data":{"mime_type":"image/png","data":"iVBOR"}},{"function_response":{"name":"f","response":{"a":1}}}]},{"role":"model","parts":[{"function_call":{"name":"f","args":{}}},{"file_data":{"mime_type":"application/pdf","file_uri":"gs://b/d.pdf"}}]}],"tools":[{"function_declarations":[{"name":"f","parameters_json_schema":{"type":"object"}}]}]}`,
			[]string{"be brief", "f", `{"a":1}`, "f", "{}", "f", `{"type":"object"}`}, imageTokens + base64Tokens(0) + 2*4 + 3},
		{"gemini: not a request", countGeminiPrompt, `["contents"]`, nil, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := textTokens(t, tc.texts...) + tc.extra
			if got := countWith(tc.count, tc.body); got != want {
				t.Errorf("%d tokens, want %d", got, want)
			}
		})
	}
}

// Each dialect counts its prompts with its own counter.
func TestCountPromptWired(t *testing.T) {
	for _, tc := range []struct {
		d    *Dialect
		body string
	}{
		{Messages, `{"messages":[{"role":"user","content":[{"type":"text","text":"hello world"}]}]}`},
		{Chat, `{"messages":[{"role":"user","content":[{"type":"text","text":"hello world"}]}]}`},
		{Responses, `{"input":[{"role":"user","content":[{"type":"input_text","text":"hello world"}]}]}`},
	} {
		if got, want := countWith(tc.d.CountPrompt, tc.body), textTokens(t, "hello world")+4+3; got != want {
			t.Errorf("%s: %d tokens, want %d", tc.d, got, want)
		}
	}
}

// The prompt counters read any bytes without failing, and count at least
// a request's framing.
func FuzzCountPrompt(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","data":"x"}}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"image_url"},{"type":"file","file":{}}]}]}`,
		`{"input":[{"type":"function_call_output","output":[{"type":"input_file","file_data":"x"}]}]}`,
		`{"contents":[{"parts":[{"functionResponse":{"parts":[{"functionResponse":{"parts":[{"text":"x"}]}}]}}]}]}`,
		`{"system_instruction":{"parts":{"text":"x"}},"tools":[{"function_declarations":{"name":1}}]}`,
		`{"contents":"x"`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, count := range []func(*tokens.Counter, []byte){countMessagesPrompt, countChatPrompt, countResponsesPrompt, countGeminiPrompt} {
			if n := countWith(count, string(body)); n < 3 {
				t.Errorf("%q: %d tokens, fewer than the framing", body, n)
			}
		}
	})
}

// nested is a request whose one turn holds a block nested depth deep:
// open and close wrap each level around the innermost block.
func nested(prefix, open, inner, close, suffix string, depth int) string {
	return prefix + strings.Repeat(open, depth) + inner + strings.Repeat(close, depth) + suffix
}

// Hostile nestings, each holding the text "n" at every level.
func nestedResults(depth int) string {
	return nested(`{"messages":[{"role":"user","content":[`, `{"type":"tool_result","content":[{"type":"text","text":"n"},`,
		`{"type":"text","text":"n"}`, `]}`, `]}]}`, depth)
}

func nestedDocuments(depth int) string {
	return nested(`{"messages":[{"role":"user","content":[`, `{"type":"document","source":{"type":"content","content":[{"type":"text","text":"n"},`,
		`{"type":"text","text":"n"}`, `]}}`, `]}]}`, depth)
}

func nestedResultDocuments(depth int) string {
	return nested(`{"messages":[{"role":"user","content":[`, `{"type":"tool_result","content":[{"type":"text","text":"n"},{"type":"document","source":{"type":"content","content":[{"type":"text","text":"n"},`,
		`{"type":"text","text":"n"}`, `]}}]}`, `]}]}`, depth)
}

// nestedResponses is a turn of function responses nested depth deep, each
// named "n".
func nestedResponses(depth int) string {
	return nested(`{"contents":[{"role":"user","parts":[`, `{"functionResponse":{"name":"n","response":{},"parts":[`,
		``, `]}}`, `]}]}`, depth)
}

// Content nests only as deep as each protocol nests it: a Messages tool
// result holds blocks (documents among them), a document's source holds
// blocks, a Gemini function response holds parts. A hostile nesting is
// not followed, and its texts are not counted.
func TestCountPromptNesting(t *testing.T) {
	tests := []struct {
		name  string
		count func(*tokens.Counter, []byte)
		body  func(depth int) string
		texts []string // at depth 2 and deeper
	}{
		{"messages: tool results", countMessagesPrompt, nestedResults, []string{"n"}},
		{"messages: documents", countMessagesPrompt, nestedDocuments, []string{"n"}},
		{"messages: documents in tool results", countMessagesPrompt, nestedResultDocuments, []string{"n", "n"}},
		{"gemini: function responses", countGeminiPrompt, nestedResponses, []string{"n", `{}`, "n", `{}`}},
	}
	for _, tc := range tests {
		for _, depth := range []int{2, 3, 9000} {
			want := textTokens(t, tc.texts...) + 4 + 3
			if got := countWith(tc.count, tc.body(depth)); got != want {
				t.Errorf("%s, depth %d: %d tokens, want %d", tc.name, depth, got, want)
			}
		}
	}
}

// lookCounter is a context that counts the looks at it, and ends at the
// first unless it is live.
type lookCounter struct {
	context.Context
	live  bool
	looks int
}

func (c *lookCounter) Err() error {
	c.looks++
	if c.live {
		return nil
	}
	return context.Canceled
}

// A deep body is walked in work proportional to its size, as the
// counter sees it: it looks at its context once per so much work, and a
// body four times as deep takes about four times as many looks.
func TestCountPromptLinear(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count func(*tokens.Counter, []byte)
		body  func(depth int) string
	}{
		{"messages: tool results", countMessagesPrompt, nestedResults},
		{"messages: documents", countMessagesPrompt, nestedDocuments},
		{"messages: documents in tool results", countMessagesPrompt, nestedResultDocuments},
		{"gemini: function responses", countGeminiPrompt, nestedResponses},
	} {
		looks := func(depth int) int {
			ctx := &lookCounter{Context: context.Background(), live: true}
			tc.count(&tokens.Counter{Context: ctx}, []byte(tc.body(depth)))
			return ctx.looks
		}
		if small, large := looks(5000), looks(20000); small < 2 || large > 4*small+4 {
			t.Errorf("%s: %d looks at depth 5000, %d at depth 20000", tc.name, small, large)
		}
	}
}

// A hostile body, deep or wide, stops counting as soon as the counter
// sees its context ended, and what was not read is counted at the
// estimate's rate: the walk does not go on to count turns and images.
func TestCountPromptStops(t *testing.T) {
	const turns = 50000
	wide := func(prefix, turn, last string) string {
		return prefix + strings.Repeat(turn+",", turns-1) + last + `]}`
	}
	for _, tc := range []struct {
		name  string
		count func(*tokens.Counter, []byte)
		body  string
	}{
		{"messages: deep", countMessagesPrompt, nestedResultDocuments(9000)},
		{"messages: wide", countMessagesPrompt, wide(`{"messages":[`, `{"role":"user","content":[{"type":"image"}]}`, `{}`)},
		{"chat: wide", countChatPrompt, wide(`{"messages":[`, `{"role":"user","content":[{"type":"image_url"}]}`, `{}`)},
		{"responses: wide", countResponsesPrompt, wide(`{"input":[`, `{"role":"user","content":[{"type":"input_image"}]}`, `{}`)},
		{"gemini: deep", countGeminiPrompt, nestedResponses(9000)},
		{"gemini: wide", countGeminiPrompt, wide(`{"contents":[`, `{"parts":[{"inlineData":{"mimeType":"image/png","data":""}}]}`, `{"parts":[]}`)},
	} {
		ctx := &lookCounter{Context: context.Background()}
		c := tokens.Counter{Context: ctx}
		tc.count(&c, []byte(tc.body))
		if c.Err() == nil || ctx.looks != 1 {
			t.Errorf("%s: error %v after %d looks at the context, want it seen once", tc.name, c.Err(), ctx.looks)
		}
		// Unread bytes count a token per four; each turn read would count
		// 4 and each image imageTokens.
		if n := c.Tokens(); n < len(tc.body)/4 || n > len(tc.body)/4+4+3+1 {
			t.Errorf("%s: %d tokens for %d unread bytes", tc.name, n, len(tc.body))
		}
	}
}

// conversation is a request of 150 turns: a question, a tool call, its
// result, fifty times over, in the given protocol's shapes.
func conversation(prefix, question, call, result, suffix string) []byte {
	var sb strings.Builder
	sb.WriteString(prefix)
	for i := range 50 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(question + "," + call + "," + result)
	}
	sb.WriteString(suffix)
	return []byte(sb.String())
}

func BenchmarkCountPrompt(b *testing.B) {
	const q = "What is the weather in Paris today, and should I take an umbrella?"
	for _, bc := range []struct {
		name  string
		count func(*tokens.Counter, []byte)
		body  []byte
	}{
		{"messages", countMessagesPrompt, conversation(`{"system":"You are a careful assistant.","messages":[`,
			`{"role":"user","content":[{"type":"text","text":"`+q+`"}]}`,
			`{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"get_weather","input":{"city":"Paris","unit":"celsius"}}]}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"{\"temp\":21,\"rain\":0.4}"}]}]}`,
			`],"tools":[{"name":"get_weather","description":"Current weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]}`)},
		{"chat", countChatPrompt, conversation(`{"messages":[{"role":"system","content":"You are a careful assistant."},`,
			`{"role":"user","content":"`+q+`"}`,
			`{"role":"assistant","content":null,"tool_calls":[{"id":"t","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"celsius\"}"}}]}`,
			`{"role":"tool","tool_call_id":"t","content":"{\"temp\":21,\"rain\":0.4}"}`,
			`],"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`)},
		{"responses", countResponsesPrompt, conversation(`{"instructions":"You are a careful assistant.","input":[`,
			`{"role":"user","content":[{"type":"input_text","text":"`+q+`"}]}`,
			`{"type":"function_call","call_id":"t","name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"celsius\"}"}`,
			`{"type":"function_call_output","call_id":"t","output":"{\"temp\":21,\"rain\":0.4}"}`,
			`],"tools":[{"type":"function","name":"get_weather","description":"Current weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}`)},
		{"gemini", countGeminiPrompt, conversation(`{"systemInstruction":{"parts":[{"text":"You are a careful assistant."}]},"contents":[`,
			`{"role":"user","parts":[{"text":"`+q+`"}]}`,
			`{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris","unit":"celsius"}}}]}`,
			`{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21,"rain":0.4}}}]}`,
			`],"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Current weather for a city","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}}]}]}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bc.count(&tokens.Counter{}, bc.body) // loads the vocabulary, once
			b.SetBytes(int64(len(bc.body)))
			b.ReportAllocs()
			for b.Loop() {
				var c tokens.Counter
				bc.count(&c, bc.body)
			}
		})
	}
}
