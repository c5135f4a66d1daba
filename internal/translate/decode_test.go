package translate

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// sameAsReflective checks that decode gives what jsonx.Unmarshal gives
// for body: the same value, or the same error word for word. It reports
// whether the hand-written decoder took the body (rather than leaving it
// to the reflective one).
func sameAsReflective[T any](t *testing.T, body []byte, hand func(*reader, *T)) bool {
	t.Helper()
	var want T
	wantErr := jsonx.Unmarshal(body, &want)
	var got T
	gotErr := decode(body, &got)
	switch {
	case (gotErr == nil) != (wantErr == nil):
		t.Fatalf("%s: decode error %v, reflective error %v", body, gotErr, wantErr)
	case gotErr != nil && gotErr.Error() != wantErr.Error():
		t.Fatalf("%s: decode error\n%v\nreflective error\n%v", body, gotErr, wantErr)
	case !reflect.DeepEqual(got, want):
		t.Fatalf("%s: decode\n%#v\nreflective\n%#v", body, got, want)
	}
	var v T
	took := decodeWith(body, &v, hand)
	if took && wantErr != nil {
		t.Fatalf("%s: decoded by hand, but the reflective decoder says %v", body, wantErr)
	}
	if took && !reflect.DeepEqual(v, want) {
		t.Fatalf("%s: by hand\n%#v\nreflective\n%#v", body, v, want)
	}
	return took
}

// TestDecodeMatchesReflective: the hand-written decoders take the bodies
// they are written for and give what the reflective decoder gives; every
// other body, they leave to it.
func TestDecodeMatchesReflective(t *testing.T) {
	chat := func(t *testing.T, b []byte) bool { return sameAsReflective(t, b, (*reader).chatRequest) }
	messages := func(t *testing.T, b []byte) bool { return sameAsReflective(t, b, (*reader).messagesRequest) }
	completion := func(t *testing.T, b []byte) bool { return sameAsReflective(t, b, (*reader).completion) }
	response := func(t *testing.T, b []byte) bool { return sameAsReflective(t, b, (*reader).messagesResponse) }
	responses := func(t *testing.T, b []byte) bool { return sameAsReflective(t, b, (*reader).responsesRequest) }
	geminiRequest := func(t *testing.T, b []byte) bool { return sameAsReflective(t, b, (*reader).geminiRequest) }
	geminiResponse := func(t *testing.T, b []byte) bool { return sameAsReflective(t, b, (*reader).geminiResponse) }
	for _, c := range []struct {
		name   string
		decode func(*testing.T, []byte) bool // sameAsReflective with a decoder
		body   string
		hand   bool // decoded by hand, not left to the reflective decoder
	}{
		{"chat full", chat, `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"t","cache_control":{"type":"ephemeral"}},{"type":"image_url","image_url":{"url":"u","detail":"low","x":1}},{"type":"file","file":{"file_id":"f","filename":"a.pdf","file_data":"d"}},{"type":"input_audio","input_audio":{"data":"x","format":"wav"},"extra":[1, 2]}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"index":0}],"refusal":null,"reasoning_content":"r","reasoning":"q","thinking_blocks":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"d"}],"reasoning_signature":"sig","function_call":{"name":"g","arguments":"1"}},{"role":"tool","tool_call_id":"c","content":"ok","name":"n","x-y":{"a":[true]}}],"max_tokens":10,"max_completion_tokens":-0,"stream":true,"stream_options":{"include_usage":true,"other":1},"temperature":0.5e1,"top_p":1,"top_k":3,"stop":["a","b"],"n":1,"logprobs":false,"top_logprobs":2,"user":"u","prompt_cache_key":"k","safety_identifier":"s","tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"},"strict":true,"x":1},"y":2}],"tool_choice":"auto","parallel_tool_calls":true,"functions":[{"name":"g"}],"function_call":{"name":"g"},"reasoning_effort":"low","response_format":{"type":"json_object"},"modalities":["text"],"audio":null,"thinking":{"type":"enabled"},"reasoning":{"effort":"high"},"enable_thinking":false,"seed":7,"metadata":{"a":"b"}}`, true},
		{"chat nulls", chat, `{"model":null,"messages":null,"max_tokens":null,"stream":null,"stream_options":null,"temperature":null,"stop":null,"tools":null,"tool_choice":null,"logprobs":null}`, true},
		{"chat empty arrays", chat, `{"messages":[],"tools":[],"stop":[],"modalities":[]}`, true},
		{"chat stop string", chat, `{"stop":"x"}`, true},
		{"chat escaped names", chat, `{"mod\u0065l":"m","\u00e9":1,"messages":[{"r\u006fle":"user","content":"\ud83d\udc1b"}]}`, true},
		{"chat whitespace", chat, " {\n\"model\" : \"m\" ,\t\"x\" : [ 1 , {\"a\" : 2} ] , \"y\":1 }\n", true},
		{"chat structs null", chat, `{"messages":[{"role":"assistant","tool_calls":[{"function":null}],"function_call":null}],"tools":[{"function":null}]}`, true},
		{"chat content kinds", chat, `{"messages":[{"content":""},{"content":[]},{}]}`, true},
		{"chat float int", chat, `{"max_tokens":1.0}`, false},
		{"chat exponent int", chat, `{"max_tokens":1e3}`, false},
		{"chat overflow", chat, `{"max_tokens":9223372036854775808}`, false},
		{"chat min int", chat, `{"max_tokens":-9223372036854775808}`, true},
		{"chat float overflow", chat, `{"temperature":1e999}`, false},
		{"chat wrong kind", chat, `{"model":1}`, false},
		{"chat content number", chat, `{"messages":[{"role":"user","content":1}]}`, false},
		{"chat stop number", chat, `{"stop":1}`, false},
		{"chat stop mixed", chat, `{"stop":["a",1]}`, false},
		{"chat duplicate", chat, `{"model":"a","model":"b"}`, false},
		{"chat duplicate unknown", chat, `{"x":1,"x":2}`, false},
		{"chat duplicate nested", chat, `{"response_format":{"a":1,"a":2}}`, false},
		{"chat invalid utf8", chat, "{\"model\":\"\xff\"}", false},
		{"chat invalid utf8 name", chat, "{\"\xff\":1}", false},
		{"chat trailing", chat, `{"model":"m"} {}`, false},
		{"chat trailing garbage", chat, `{"model":"m"}x`, false},
		{"chat truncated", chat, `{"model":"m"`, false},
		{"chat not object", chat, `[]`, false},
		{"chat null body", chat, `null`, false},
		{"chat empty", chat, ``, false},
		{"chat bool wrong", chat, `{"stream":"true"}`, false},
		{"messages full", messages, `{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":"hi","cache_control":{"type":"ephemeral"},"clear_at":"x"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"d"},{"type":"text","text":"a","citations":[{"x":1}]},{"type":"tool_use","id":"i","name":"n","input":{"a":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"i","content":[{"type":"text","text":"r"}],"is_error":true},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"x"}},{"type":"search_result","source":"https://x","title":"t","content":[]},{"type":"document","source":{"type":"content","content":"c"}},{"type":"web_search_tool_result","tool_use_id":"s","content":{"type":"web_search_tool_result_error"}},{"type":"x","other":null}]}],"stop_sequences":["x"],"stream":false,"temperature":1,"top_p":0.9,"top_k":5,"metadata":{"user_id":"u","other":1},"tools":[{"name":"t","description":"d","input_schema":{"type":"object"},"strict":true,"cache_control":{"type":"ephemeral"},"defer_loading":true,"input_examples":[{}],"allowed_callers":["a"],"eager_input_streaming":false,"z":1},{"type":"web_search_20250305","name":"web_search","max_uses":3}],"tool_choice":{"type":"tool","name":"t","disable_parallel_tool_use":true,"x":1},"thinking":{"type":"enabled","budget_tokens":1024,"display":"x"},"output_config":{"effort":"low","format":{"type":"json_schema"},"task_budget":1},"output_format":null,"service_tier":"auto","mcp_servers":[],"container":"c","context_management":{},"cache_control":{"type":"ephemeral"},"inference_geo":"us","anthropic_beta":["x"]}`, true},
		{"messages nulls", messages, `{"model":"m","max_tokens":null,"system":null,"messages":[{"role":"user","content":null}],"metadata":null,"tool_choice":null,"thinking":null,"output_config":null,"stop_sequences":null,"top_k":null}`, true},
		{"messages system string", messages, `{"system":"s","messages":[{"role":"user","content":[{"type":"tool_result","content":"x"},{"type":"tool_result","content":null},{"type":"text","text":null,"source":null}]}]}`, true},
		{"messages system object", messages, `{"system":{"a":1}}`, true},
		{"messages system number", messages, `{"system":1}`, false},
		{"messages source number", messages, `{"messages":[{"content":[{"type":"image","source":1}]}]}`, false},
		{"messages max_tokens string", messages, `{"max_tokens":"5"}`, false},
		{"messages duplicate block member", messages, `{"messages":[{"content":[{"type":"text","type":"text"}]}]}`, false},
		{"messages extra not object", messages, `{"messages":[{"content":"x","extra":}]}`, false},
		{"completion", completion, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1},"system_fingerprint":null,"service_tier":"default"}`, true},
		{"completion tool calls", completion, `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"system_fingerprint":"fp"}`, true},
		{"completion created float", completion, `{"created":1.5}`, false},
		{"completion choices object", completion, `{"choices":{}}`, false},
		{"response", response, `{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"hi","citations":null},{"type":"tool_use","id":"t","name":"n","input":{}}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":2},"container":null}`, true},
		{"response empty content", response, `{"content":[],"stop_reason":null}`, true},
		{"response usage null", response, `{"usage":null}`, true},
		{"response content string", response, `{"content":"x"}`, false},
		{"responses full", responses, `{"model":"m","input":[{"role":"user","content":"hi"},{"type":"message","role":"user","content":[{"type":"input_text","text":"t"},{"type":"input_image","image_url":"u","detail":"low"},{"type":"input_file","file_id":"f","file_data":"d","file_url":"x","filename":"a.pdf","other":1}],"phase":"p","id":"i","status":"s"},{"type":"function_call","call_id":"c","name":"f","namespace":"n","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"},{"type":"custom_tool_call","input":"x","call_id":"d"},{"type":"custom_tool_call_output","output":[{"type":"input_text","text":"r"}]},{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"e","x":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a","annotations":[]},{"type":"refusal","refusal":"no"}]},{"type":"item_reference","id":"r"},{"role":"user","content":null}],"instructions":"be brief","tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":true},{"type":"custom","name":"g","format":{"type":"text"}},{"type":"namespace","name":"ns","tools":[{"type":"function","name":"h"}]},{"type":"web_search","search_context_size":"low"}],"tool_choice":"auto","parallel_tool_calls":false,"max_output_tokens":100,"max_tool_calls":3,"temperature":0.2,"top_p":0.9,"top_logprobs":0,"reasoning":{"effort":"low","summary":"auto","generate_summary":"x","y":1},"text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"},"strict":true,"description":"d","z":0},"verbosity":"low","w":2},"stream":true,"stream_options":{"include_obfuscation":false},"store":false,"previous_response_id":"resp_1","conversation":"c","include":["reasoning.encrypted_content"],"metadata":{"a":"b"},"prompt_cache_key":"k","safety_identifier":"s","user":"u","truncation":"auto","service_tier":"auto","background":false,"prompt":{"id":"p"},"seed":1}`, true},
		{"responses string input", responses, `{"model":"m","input":"hi","instructions":null,"reasoning":null,"text":{"format":null}}`, true},
		{"responses null input", responses, `{"input":null}`, false},
		{"responses input number", responses, `{"input":1}`, false},
		{"responses content number", responses, `{"input":[{"content":1}]}`, false},
		{"responses arguments object", responses, `{"input":[{"type":"function_call","arguments":{}}]}`, false},
		{"gemini request full", geminiRequest, `{"contents":[{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"x","y":1}},{"fileData":{"mimeType":"application/pdf","fileUri":"gs://f"}},{"videoMetadata":{}}]},{"role":"model","parts":[{"text":"t","thought":true,"thoughtSignature":"s"},{"functionCall":{"id":"c","name":"f","args":{"a":1}}}]},{"role":"user","parts":[{"functionResponse":{"id":"c","name":"f","response":{"ok":true},"parts":[{"inlineData":{"mimeType":"image/png","data":"x"}}],"willContinue":false}}],"x":1}],"systemInstruction":{"parts":[{"text":"s"}]},"tools":[{"functionDeclarations":[{"name":"f","description":"d","parameters":{"type":"OBJECT"},"parametersJsonSchema":{"type":"object"},"behavior":"BLOCKING"}]},{"googleSearch":{}}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"],"z":0},"retrievalConfig":{}},"generationConfig":{"temperature":0.5,"topP":0.9,"topK":40,"maxOutputTokens":100,"stopSequences":["x"],"candidateCount":1,"presencePenalty":0.1,"frequencyPenalty":-0.1,"seed":7,"responseMimeType":"application/json","responseSchema":{"type":"OBJECT"},"responseJsonSchema":{"type":"object"},"responseModalities":["TEXT"],"responseLogprobs":true,"logprobs":2,"thinkingConfig":{"thinkingBudget":1024,"thinkingLevel":"low","includeThoughts":true,"q":1},"speechConfig":{}},"safetySettings":[{"category":"x"}],"cachedContent":"c","labels":{"a":"b"},"model":"m"}`, true},
		{"gemini request nulls", geminiRequest, `{"contents":null,"systemInstruction":null,"generationConfig":{"thinkingConfig":null,"maxOutputTokens":null},"labels":null}`, true},
		{"gemini labels number", geminiRequest, `{"labels":{"a":1}}`, false},
		{"gemini parts object", geminiRequest, `{"contents":[{"parts":{}}]}`, false},
		{"gemini response", geminiResponse, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"},{"functionCall":{"name":"f","args":{}}}]},"finishReason":"STOP","finishMessage":"m","index":0,"safetyRatings":[],"avgLogprobs":-0.1}],"promptFeedback":{"blockReason":"SAFETY","blockReasonMessage":"b","safetyRatings":[]},"usageMetadata":{"promptTokenCount":1},"modelVersion":"g","responseId":"r","createTime":"t"}`, true},
		{"gemini response index float", geminiResponse, `{"candidates":[{"index":0.5}]}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.decode(t, []byte(c.body)); got != c.hand {
				t.Errorf("decoded by hand: %v, want %v", got, c.hand)
			}
		})
	}
}

// seedBodies adds every JSON body of the golden files, and bodies.
func seedBodies(f *testing.F, bodies ...string) {
	files, _ := filepath.Glob("testdata/*.txtar")
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range a.Files {
			if filepath.Ext(s.Name) == ".json" {
				f.Add(s.Data)
			}
		}
	}
	for _, b := range bodies {
		f.Add([]byte(b))
	}
}

// FuzzDecodeChatRequest: whatever a client sends, the hand-written
// decoder of Chat requests gives what the reflective one gives.
func FuzzDecodeChatRequest(f *testing.F) {
	seedBodies(f, string(openAIBody(1<<10)))
	f.Fuzz(func(t *testing.T, body []byte) { sameAsReflective(t, body, (*reader).chatRequest) })
}

// FuzzDecodeMessagesRequest is the same for Messages requests.
func FuzzDecodeMessagesRequest(f *testing.F) {
	seedBodies(f, string(anthropicBody(1<<10)))
	f.Fuzz(func(t *testing.T, body []byte) { sameAsReflective(t, body, (*reader).messagesRequest) })
}

// FuzzDecodeCompletion is the same for a Chat upstream's answers.
func FuzzDecodeCompletion(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) { sameAsReflective(t, body, (*reader).completion) })
}

// FuzzDecodeMessagesResponse is the same for a Messages upstream's answers.
func FuzzDecodeMessagesResponse(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) { sameAsReflective(t, body, (*reader).messagesResponse) })
}

// FuzzDecodeResponsesRequest is the same for Responses requests.
func FuzzDecodeResponsesRequest(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) { sameAsReflective(t, body, (*reader).responsesRequest) })
}

// FuzzDecodeGeminiRequest is the same for Gemini requests.
func FuzzDecodeGeminiRequest(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) { sameAsReflective(t, body, (*reader).geminiRequest) })
}

// FuzzDecodeGeminiResponse is the same for a Gemini upstream's answers.
func FuzzDecodeGeminiResponse(f *testing.F) {
	seedBodies(f)
	f.Fuzz(func(t *testing.T, body []byte) { sameAsReflective(t, body, (*reader).geminiResponse) })
}

func TestPathAt(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, c := range []struct {
		path, name string
		i          int
		want       string
	}{
		{"", "messages", 0, "messages[0]"},
		{"messages[12]", "content", 345, "messages[12].content[345]"},
		{"input[1]", "output", -1, "input[1].output[-1]"},
		{long, "tools", 7, long + ".tools[7]"},
	} {
		if got := pathAt(c.path, c.name, c.i); got != c.want {
			t.Errorf("pathAt(%q, %q, %d) = %q, want %q", c.path, c.name, c.i, got, c.want)
		}
	}
}
