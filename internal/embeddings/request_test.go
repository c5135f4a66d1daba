package embeddings

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate/tollgate/internal/jsonx"
)

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Request
	}{
		{"string", `{"model":"m","input":"hello"}`,
			Request{Model: "m", Format: "float", Inputs: []Input{{Text: "hello"}}}},
		{"array of strings", `{"model":"m","input":["a","b c","d"]}`,
			Request{Model: "m", Format: "float", Inputs: []Input{{Text: "a"}, {Text: "b c"}, {Text: "d"}}}},
		{"escaped strings", `{"model":"m","input":["\u00e9\n","\"q\"","\ud83d\ude00"]}`,
			Request{Model: "m", Format: "float", Inputs: []Input{{Text: "é\n"}, {Text: `"q"`}, {Text: "😀"}}}},
		{"token array", `{"model":"m","input":[1,0,50256]}`,
			Request{Model: "m", Format: "float", Inputs: []Input{{Tokens: []int64{1, 0, 50256}}}}},
		{"token arrays", `{"model":"m","input":[[1,2],[3],[4,5,6]]}`,
			Request{Model: "m", Format: "float", Inputs: []Input{{Tokens: []int64{1, 2}}, {Tokens: []int64{3}}, {Tokens: []int64{4, 5, 6}}}}},
		{"every member", `{"input":"x","model":"text-embedding-3-small","encoding_format":"base64","dimensions":256,"user":"u-1","task_type":"RETRIEVAL_QUERY","input_type":"search_query","extra":{"a":[1]}}`,
			Request{Model: "text-embedding-3-small", Format: "base64", Dimensions: 256, User: "u-1", TaskType: "RETRIEVAL_QUERY", InputType: "search_query", Inputs: []Input{{Text: "x"}}}},
		{"float format", `{"model":"m","input":"x","encoding_format":"float"}`,
			Request{Model: "m", Format: "float", Inputs: []Input{{Text: "x"}}}},
		{"nulls are absent", `{"model":"m","input":"x","encoding_format":null,"dimensions":null,"user":null,"task_type":null,"input_type":null}`,
			Request{Model: "m", Format: "float", Inputs: []Input{{Text: "x"}}}},
		{"last of a repeated member", `{"model":"a","model":"b","input":"x","input":["y"]}`,
			Request{Model: "b", Format: "float", Inputs: []Input{{Text: "y"}}}},
		{"whitespace", " \n{ \"model\" : \"m\" , \"input\" : [ \"a\" , \"b\" ] }\n",
			Request{Model: "m", Format: "float", Inputs: []Input{{Text: "a"}, {Text: "b"}}}},
		{"max inputs", `{"model":"m","input":[` + strings.Repeat(`"a",`, MaxInputs-1) + `"a"]}`,
			Request{Model: "m", Format: "float", Inputs: repeatText("a", MaxInputs)}},
		{"max token arrays", `{"model":"m","input":[` + strings.Repeat(`[1],`, MaxInputs-1) + `[1]]}`,
			Request{Model: "m", Format: "float", Inputs: repeatTokens(MaxInputs)}},
		{"long token array is one input", `{"model":"m","input":[` + strings.Repeat(`7,`, 3000) + `7]}`,
			Request{Model: "m", Format: "float", Inputs: []Input{{Tokens: fill(3001, 7)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if d := cmp.Diff(&tt.want, got); d != "" {
				t.Errorf("Parse (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	many := `{"model":"m","input":[` + strings.Repeat(`"a",`, MaxInputs) + `"a"]}`
	manyTokens := `{"model":"m","input":[` + strings.Repeat(`[1],`, MaxInputs) + `[1]]}`
	tests := []struct {
		name, body, param, msg string
	}{
		{"not JSON", `{"model":`, "", "could not parse"},
		{"empty body", ``, "", "could not parse"},
		{"array body", `["a"]`, "", "could not parse"},
		{"string body", `"a"`, "", "could not parse"},
		{"trailing garbage", `{"model":"m","input":"x"} x`, "", "could not parse"},
		{"invalid UTF-8", "{\"model\":\"m\",\"input\":\"\xff\"}", "", "could not parse"},
		{"no input", `{"model":"m"}`, "input", "input: required"},
		{"null input", `{"model":"m","input":null}`, "input", "input: required"},
		{"empty string", `{"model":"m","input":""}`, "input", "must not be empty"},
		{"empty array", `{"model":"m","input":[]}`, "input", "must not be empty"},
		{"empty string in array", `{"model":"m","input":["a",""]}`, "input", "empty string"},
		{"number input", `{"model":"m","input":5}`, "input", msgInputShape},
		{"bool input", `{"model":"m","input":true}`, "input", msgInputShape},
		{"object input", `{"model":"m","input":{"text":"a"}}`, "input", msgInputShape},
		{"array of objects", `{"model":"m","input":[{"text":"a"}]}`, "input", msgInputShape},
		{"array of nulls", `{"model":"m","input":[null]}`, "input", msgInputShape},
		{"strings then number", `{"model":"m","input":["a",1]}`, "input", msgInputShape},
		{"strings then null", `{"model":"m","input":["a",null]}`, "input", msgInputShape},
		{"tokens then string", `{"model":"m","input":[1,"a"]}`, "input", msgInputShape},
		{"tokens then array", `{"model":"m","input":[1,[2]]}`, "input", msgInputShape},
		{"arrays then token", `{"model":"m","input":[[1],2]}`, "input", msgInputShape},
		{"arrays then string", `{"model":"m","input":[[1],"a"]}`, "input", msgInputShape},
		{"string in token array", `{"model":"m","input":[[1,"a"]]}`, "input", msgInputShape},
		{"nested too deep", `{"model":"m","input":[[[1]]]}`, "input", msgInputShape},
		{"empty token array", `{"model":"m","input":[[1],[]]}`, "input", "token array must not be empty"},
		{"only empty token array", `{"model":"m","input":[[]]}`, "input", "token array must not be empty"},
		{"negative token", `{"model":"m","input":[1,-2]}`, "input", "non-negative integers"},
		{"fractional token", `{"model":"m","input":[1.5]}`, "input", "non-negative integers"},
		{"exponent token", `{"model":"m","input":[[1e3]]}`, "input", "non-negative integers"},
		{"huge token", `{"model":"m","input":[99999999999999999999]}`, "input", "non-negative integers"},
		{"null token", `{"model":"m","input":[1,null]}`, "input", "non-negative integers"},
		{"too many strings", many, "input", "at most 2048"},
		{"too many token arrays", manyTokens, "input", "at most 2048"},
		{"bad format", `{"model":"m","input":"x","encoding_format":"int8"}`, "encoding_format", "encoding_format"},
		{"empty format", `{"model":"m","input":"x","encoding_format":""}`, "encoding_format", "encoding_format"},
		{"format not a string", `{"model":"m","input":"x","encoding_format":1}`, "encoding_format", "encoding_format"},
		{"zero dimensions", `{"model":"m","input":"x","dimensions":0}`, "dimensions", "positive integer"},
		{"negative dimensions", `{"model":"m","input":"x","dimensions":-256}`, "dimensions", "positive integer"},
		{"fractional dimensions", `{"model":"m","input":"x","dimensions":25.6}`, "dimensions", "positive integer"},
		{"float dimensions", `{"model":"m","input":"x","dimensions":256.0}`, "dimensions", "positive integer"},
		{"string dimensions", `{"model":"m","input":"x","dimensions":"256"}`, "dimensions", "positive integer"},
		{"huge dimensions", `{"model":"m","input":"x","dimensions":4294967296}`, "dimensions", "positive integer"},
		{"no model", `{"input":"x"}`, "model", "model"},
		{"empty model", `{"model":"","input":"x"}`, "model", "model"},
		{"model not a string", `{"model":3,"input":"x"}`, "model", "model"},
		{"user not a string", `{"model":"m","input":"x","user":1}`, "user", "user"},
		{"task_type not a string", `{"model":"m","input":"x","task_type":[]}`, "task_type", "task_type"},
		{"input_type not a string", `{"model":"m","input":"x","input_type":{}}`, "input_type", "input_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse([]byte(tt.body))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want *Error", r, err)
			}
			if e.Param != tt.param || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("Parse: param %q message %q; want param %q message containing %q", e.Param, e.Message, tt.param, tt.msg)
			}
		})
	}
}

// Parse's result must not share memory with the body, which the caller
// reuses.
func TestParseCopies(t *testing.T) {
	body := []byte(`{"model":"mm","input":["aa","bb"],"user":"uu","task_type":"tt","input_type":"ii"}`)
	r, err := Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 'X'
	}
	want := &Request{Model: "mm", Format: "float", User: "uu", TaskType: "tt", InputType: "ii", Inputs: []Input{{Text: "aa"}, {Text: "bb"}}}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("after overwriting the body (-want +got):\n%s", d)
	}
}

func repeatText(s string, n int) []Input {
	out := make([]Input, n)
	for i := range out {
		out[i].Text = s
	}
	return out
}

func repeatTokens(n int) []Input {
	out := make([]Input, n)
	for i := range out {
		out[i].Tokens = []int64{1}
	}
	return out
}

func fill(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// requestBody writes r back as an OpenAI request body (for the fuzz target
// and benchmarks).
func requestBody(r *Request) []byte {
	b := jsonx.AppendQuote([]byte(`{"model":`), r.Model)
	b = append(b, `,"input":[`...)
	for i, in := range r.Inputs {
		if i > 0 {
			b = append(b, ',')
		}
		if in.Tokens == nil {
			b = jsonx.AppendQuote(b, in.Text)
			continue
		}
		b = append(b, '[')
		for j, tok := range in.Tokens {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, tok, 10)
		}
		b = append(b, ']')
	}
	b = append(b, `],"encoding_format":`...)
	b = jsonx.AppendQuote(b, r.Format)
	if r.Dimensions > 0 {
		b = append(b, `,"dimensions":`...)
		b = strconv.AppendInt(b, int64(r.Dimensions), 10)
	}
	for _, m := range [][2]string{{"user", r.User}, {"task_type", r.TaskType}, {"input_type", r.InputType}} {
		if m[1] != "" {
			b = append(b, `,"`+m[0]+`":`...)
			b = jsonx.AppendQuote(b, m[1])
		}
	}
	return append(b, '}')
}
