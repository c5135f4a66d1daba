package translate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// bodyPairs are the request translators by golden prefix.
var bodyPairs = map[string]func(context.Context, []byte, Target) ([]byte, *Plan, error){
	"m2c": MessagesBodyToChat, "m2r": MessagesBodyToResponses, "m2g": MessagesBodyToGemini,
	"c2m": ChatBodyToMessages, "c2r": ChatBodyToResponses, "c2g": ChatBodyToGemini,
	"r2m": ResponsesBodyToMessages, "r2c": ResponsesBodyToChat, "r2g": ResponsesBodyToGemini,
}

// Requests every upstream would refuse (or would take in a form the
// client did not mean) are refused before they leave, naming the member
// by its JSON path and saying what is accepted.
func TestRefusedRequests(t *testing.T) {
	const (
		aUser = `{"role":"user","content":"hi"}`
		cUser = `{"role":"user","content":"hi"}`
	)
	a := func(members, msgs string) string {
		return `{"model":"m","max_tokens":100` + members + `,"messages":[` + msgs + `]}`
	}
	c := func(members, msgs string) string { return `{"model":"m"` + members + `,"messages":[` + msgs + `]}` }
	r := func(members, input string) string { return `{"model":"m"` + members + `,"input":[` + input + `]}` }
	aCall := `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]}`
	aNoIDResult := `{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","content":"ok"}]}`
	cCall := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	tiff := `{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/tiff;base64,SUkq"}}]}`

	tests := []struct {
		name, pair, body string
		param, message   string // message: a part of it, after "param: "
	}{
		// Anthropic clients.
		{"tool_result without tool_use_id", "m2c", a(``, aUser+`,`+aCall+`,`+aNoIDResult), "messages[2].content[1].tool_use_id", "required, a non-empty string: the id of the tool_use block"},
		{"tool_result without tool_use_id", "m2r", a(``, aUser+`,`+aCall+`,`+aNoIDResult), "messages[2].content[1].tool_use_id", "required"},
		{"tool_use without id", "m2c", a(``, aUser+`,{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","name":"f","input":{}}]}`), "messages[1].content[1].id", "required"},
		{"tool_use without id", "m2r", a(``, aUser+`,{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}`), "messages[1].content[0].id", "required"},
		{"max_tokens 0", "m2c", `{"model":"m","max_tokens":0,"messages":[` + aUser + `]}`, "max_tokens", "must be a positive integer (the most tokens the answer may have), got 0"},
		{"max_tokens negative", "m2c", `{"model":"m","max_tokens":-5,"messages":[` + aUser + `]}`, "max_tokens", "got -5"},
		{"max_tokens 0", "m2r", `{"model":"m","max_tokens":0,"messages":[` + aUser + `]}`, "max_tokens", "must be a positive integer"},
		{"tool without name", "m2c", a(`,"tools":[{"name":"ok","input_schema":{"type":"object"}},{"input_schema":{"type":"object"}}]`, aUser), "tools[1].name", `required, a non-empty string such as "get_weather"`},
		{"tool without name", "m2r", a(`,"tools":[{"input_schema":{"type":"object"}}]`, aUser), "tools[0].name", "required"},
		{"forced tool without name", "m2c", a(`,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool"}`, aUser), "tool_choice.name", "required"},
		{"forced tool without name", "m2r", a(`,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool"}`, aUser), "tool_choice.name", "required"},

		// Chat Completions clients.
		{"function tool without function", "c2m", c(`,"tools":[{"type":"function"}]`, cUser), "tools[0].function", `required for a tool of type "function"`},
		{"function tool without function", "c2r", c(`,"tools":[{"type":"function"}]`, cUser), "tools[0].function", "required"},
		{"function tool with an empty name", "c2m", c(`,"tools":[{"type":"function","function":{"name":"","parameters":{"type":"object"}}}]`, cUser), "tools[0].function.name", `required, a non-empty string such as "get_weather"`},
		{"function tool with an empty name", "c2r", c(`,"tools":[{"type":"function","function":{"description":"d"}}]`, cUser), "tools[0].function.name", "required"},
		{"legacy function without name", "c2m", c(`,"tools":[{"type":"function","function":{"name":"f"}}],"functions":[{"description":"d"}]`, cUser), "functions[0].name", "required"},
		{"tiff image", "c2m", c(``, tiff), "messages[0].content[0].image_url.url", `image type "image/tiff" cannot be sent to an Anthropic model, which takes image/jpeg, image/png, image/gif and image/webp`},
		{"tiff image, upper case with parameters", "c2m", c(``, `{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:Image/TIFF;name=x.tif;base64,SUkq"}}]}`), "messages[0].content[0].image_url.url", `image type "image/tiff"`},
		{"data URL not base64", "c2m", c(``, `{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,abc"}}]}`), "messages[0].content[0].image_url.url", "must be base64-encoded"},
		{"image URL neither data nor http", "c2m", c(``, `{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}`), "messages[0].content[0].image_url.url", "must be a data: URL or an http(s) URL"},
		{"tool message without tool_call_id", "c2m", c(``, cUser+`,`+cCall+`,{"role":"tool","content":"ok"}`), "messages[2].tool_call_id", "required, a non-empty string: the id of the assistant tool call"},
		{"tool message without tool_call_id", "c2r", c(``, cUser+`,`+cCall+`,{"role":"tool","content":"ok"}`), "messages[2].tool_call_id", "required"},
		{"tool call without id", "c2m", c(``, cUser+`,{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}`), "messages[1].tool_calls[0].id", "required"},
		{"tool call without id", "c2r", c(``, cUser+`,{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}`), "messages[1].tool_calls[0].id", "required"},
		{"max_tokens 0", "c2m", c(`,"max_tokens":0`, cUser), "max_tokens", "must be a positive integer"},
		{"max_completion_tokens 0", "c2m", c(`,"max_completion_tokens":0`, cUser), "max_completion_tokens", "got 0"},
		{"max_tokens 0 beside max_completion_tokens", "c2m", c(`,"max_completion_tokens":50,"max_tokens":0`, cUser), "max_tokens", "got 0"},
		{"max_completion_tokens negative", "c2r", c(`,"max_completion_tokens":-1`, cUser), "max_completion_tokens", "got -1"},
		{"max_tokens 0", "c2r", c(`,"max_tokens":0`, cUser), "max_tokens", "got 0"},

		// Responses clients.
		{"function_call_output without call_id", "r2m", r(``, `{"role":"user","content":"hi"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","output":"ok"}`), "input[2].call_id", "required, a non-empty string: the id of the call this output answers"},
		{"function_call_output without call_id", "r2c", r(``, `{"role":"user","content":"hi"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","output":"ok"}`), "input[2].call_id", "required"},
		{"function_call without call_id", "r2m", r(``, `{"role":"user","content":"hi"},{"type":"function_call","name":"f","arguments":"{}"}`), "input[1].call_id", "required"},
		{"function_call without call_id", "r2c", r(``, `{"role":"user","content":"hi"},{"type":"function_call","name":"f","arguments":"{}"}`), "input[1].call_id", "required"},
		{"function tool without name", "r2m", r(`,"tools":[{"type":"function","parameters":{"type":"object"}}]`, `{"role":"user","content":"hi"}`), "tools[0].name", `required, a non-empty string such as "get_weather"`},
		{"function tool without name", "r2c", r(`,"tools":[{"type":"function"}]`, `{"role":"user","content":"hi"}`), "tools[0].name", "required"},
		{"custom tool without name", "r2c", r(`,"tools":[{"type":"custom"}]`, `{"role":"user","content":"hi"}`), "tools[0].name", "required"},
		{"namespaced tool without name", "r2m", r(`,"tools":[{"type":"namespace","name":"ns","tools":[{"type":"function","name":"a"},{"type":"function"}]}]`, `{"role":"user","content":"hi"}`), "tools[0].tools[1].name", "required"},
		{"max_output_tokens 0", "r2m", r(`,"max_output_tokens":0`, `{"role":"user","content":"hi"}`), "max_output_tokens", "must be a positive integer (the most tokens the answer may have), got 0"},
		{"max_output_tokens negative", "r2c", r(`,"max_output_tokens":-3`, `{"role":"user","content":"hi"}`), "max_output_tokens", "got -3"},
		{"tiff image", "r2m", r(``, `{"role":"user","content":[{"type":"input_image","image_url":"data:image/tiff;base64,SUkq"}]}`), "input[0].content[0].image_url", `image type "image/tiff" cannot be sent to an Anthropic model`},
		{"tiff image in a tool output", "r2m", r(``, `{"role":"user","content":"hi"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":[{"type":"input_image","image_url":"data:image/tiff;base64,SUkq"}]}`), "input[2].output[0].image_url", `image type "image/tiff"`},
	}
	for _, tc := range tests {
		t.Run(tc.pair+"/"+tc.name, func(t *testing.T) {
			for _, policy := range []Policy{PolicyDefault, PolicyLenient, PolicyStrict} {
				out, _, err := bodyPairs[tc.pair](t.Context(), []byte(tc.body), Target{Model: "u", Policy: policy})
				var re *RequestError
				if !errors.As(err, &re) {
					t.Fatalf("policy %v: got %v (%s), want a RequestError", policy, err, out)
				}
				if re.Param != tc.param || !strings.HasPrefix(re.Message, tc.param+": ") || !strings.Contains(re.Message, tc.message) {
					t.Errorf("policy %v: got param %q message %q; want param %q and a message %q…%q", policy, re.Param, re.Message, tc.param, tc.param+": ", tc.message)
				}
			}
		})
	}
}

// What the refusals above must not catch: the same members, well formed.
func TestRefusalsLetValidRequestsThrough(t *testing.T) {
	tests := []struct {
		name, pair, body string
		path, want       string // a member of the upstream request, as gjson reads it
	}{
		{"image type in upper case with parameters", "c2m", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:Image/PNG;charset=binary;base64,iVBO"}}]}]}`,
			"messages.0.content.0.source.media_type", "image/png"},
		{"webp image", "r2m", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/webp;base64,UklG"}]}]}`,
			"messages.0.content.0.source.media_type", "image/webp"},
		{"max_tokens 1", "m2c", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`, "max_completion_tokens", "1"},
		{"max_output_tokens 1 is raised to the Responses minimum", "m2r", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`, "max_output_tokens", "16"},
		{"legacy function role keeps its made-up id", "c2m", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","function_call":{"name":"f","arguments":"{}"}},{"role":"function","name":"f","content":"ok"}]}`,
			"messages.2.content.0.tool_use_id", "toolu_fc_1"},
		{"defined tool without a name takes its own", "m2c", `{"model":"m","max_tokens":5,"tools":[{"type":"memory_20250818"}],"messages":[{"role":"user","content":"hi"}]}`,
			"tools.0.function.name", "memory"},
		{"absent max_output_tokens", "r2c", `{"model":"m","input":"hi"}`, "messages.0.content", "hi"},
	}
	for _, tc := range tests {
		t.Run(tc.pair+"/"+tc.name, func(t *testing.T) {
			out, _, err := bodyPairs[tc.pair](t.Context(), []byte(tc.body), Target{Model: "u"})
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.GetBytes(out, tc.path).String(); got != tc.want {
				t.Errorf("%s = %q, want %q\n%s", tc.path, got, tc.want, out)
			}
		})
	}
}

// A body that does not decode is refused in the API's terms: its path,
// what is accepted and what came, never the decoder's Go types.
func TestUndecodableBodies(t *testing.T) {
	tests := []struct {
		pair, body, param, message string
	}{
		{"m2c", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":1,"content":"y"}]}`, "messages[1].role", "messages[1].role: expected a string, got a number"},
		{"m2c", `{"model":"m","max_tokens":"5","messages":[]}`, "max_tokens", "max_tokens: expected an integer, got a string"},
		{"m2c", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":5}]}`, "messages[0].content", "messages[0].content: expected a string or an array of content blocks, got a number"},
		{"c2m", `{"model":"m","messages":[{"role":"user","content":5}]}`, "messages[0].content", "messages[0].content: expected a string, an array of content parts or null, got a number"},
		{"c2m", `{"model":"m","messages":[{"role":"user","content":"x","role":"user"}]}`, "messages[0]", `messages[0]: duplicate field "role"`},
		{"c2m", `{"model":"m","tools":[{"type":"function","function":"f"}],"messages":[]}`, "tools[0].function", "tools[0].function: expected an object, got a string"},
		{"c2m", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function","function":{"name":7}}}`, "tool_choice.function.name", "tool_choice.function.name: expected a string, got a number"},
		{"c2m", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":5}}`, "response_format.type", "response_format.type: expected a string, got a number"},
		{"c2r", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1.5}`, "max_tokens", "max_tokens: expected an integer, got 1.5"},
		{"r2m", `{"model":"m","input":5}`, "input", "input: expected a string or an array of input items, got a number"},
		{"r2c", `{"model":"m","input":[{"role":"user","content":{}}]}`, "input[0].content", "input[0].content: expected a string, an array of content parts or null, got an object"},
		{"r2c", `{"model":"m","input":"x","tool_choice":{"type":["function"]}}`, "tool_choice.type", "tool_choice.type: expected a string, got an array"},
		{"m2r", `[1]`, "", "expected an object, got an array"},
	}
	for _, tc := range tests {
		t.Run(tc.pair+"/"+tc.message, func(t *testing.T) {
			_, _, err := bodyPairs[tc.pair](t.Context(), []byte(tc.body), Target{Model: "u"})
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("got %v, want a RequestError", err)
			}
			if re.Param != tc.param || re.Message != tc.message {
				t.Errorf("got %q, %q; want %q, %q", re.Param, re.Message, tc.param, tc.message)
			}
			for _, bad := range []string{"Go ", "json:", "jsontext", "unmarshal", "openai.", "anthropic.", "responses."} {
				if strings.Contains(re.Message, bad) {
					t.Errorf("message %q names Go internals (%q)", re.Message, bad)
				}
			}
		})
	}
}
