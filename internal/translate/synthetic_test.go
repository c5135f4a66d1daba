package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
)

func TestSyntheticStreams(t *testing.T) {
	var r anthropic.Response
	if err := jsonx.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"T","signature":"tollgate.v1.x"},{"type":"text","text":"Hi \"there\""},{"type":"tool_use","id":"call_1","name":"f","input":{"a":1}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":2,"output_tokens":4}}`), &r); err != nil {
		t.Fatal(err)
	}
	a := MessagesStream(&r)
	if err := anthropicGrammar(a); err != nil {
		t.Fatalf("grammar: %v\n%s", err, a)
	}
	for _, want := range []string{`"partial_json":"{\"a\":1}"`, `"text_delta","text":"Hi \"there\""`, `"signature_delta","signature":"tollgate.v1.x"`, `"stop_reason":"tool_use"`, `"output_tokens":4`} {
		if !strings.Contains(string(a), want) {
			t.Errorf("Anthropic stream lacks %s:\n%s", want, a)
		}
	}

	var c openai.Completion
	if err := jsonx.Unmarshal([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":5,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","reasoning_content":"R","tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`), &c); err != nil {
		t.Fatal(err)
	}
	for _, usage := range []bool{false, true} {
		o := ChatStream(&c, &Plan{AnswerModel: "m", IncludeUsage: usage})
		if err := openAIGrammar(o, usage); err != nil {
			t.Fatalf("grammar (usage=%v): %v\n%s", usage, err, o)
		}
		if !strings.Contains(string(o), `"arguments":"{\"a\":1}"`) || gjson.Get(strings.Split(string(o), "\n\n")[0][6:], "id").String() != "chatcmpl-1" {
			t.Errorf("OpenAI stream:\n%s", o)
		}
	}
}
