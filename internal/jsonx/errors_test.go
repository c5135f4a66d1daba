package jsonx

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

type probeLimits struct {
	RPM int64  `json:"rpm,omitzero"`
	Max uint8  `json:"max,omitzero"`
	Per string `json:"budget_period,omitempty"`
}

// probeContent takes a string or an array, as the API content types do.
type probeContent struct{ v jsontext.Value }

func (c *probeContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case '"', '[':
		v, err := dec.ReadValue()
		c.v = v.Clone()
		return err
	default:
		return Mismatch(k, "a string or an array of content blocks")
	}
}

// probeUSD fails with its own message, in the API's terms.
type probeUSD struct{}

func (*probeUSD) UnmarshalJSON(b []byte) error {
	return errors.New(string(b) + " is not an amount of USD such as 25 or 0.5")
}

// probeLeaky fails with a message that names Go internals.
type probeLeaky struct{}

func (*probeLeaky) UnmarshalJSON([]byte) error {
	return errors.New("json: cannot decode into Go main.thing")
}

type probeBody struct {
	Name        string                 `json:"name"`
	Models      []string               `json:"models,omitempty"`
	ExpiresAt   *time.Time             `json:"expires_at,omitempty"`
	Stream      bool                   `json:"stream,omitempty"`
	Limits      *probeLimits           `json:"limits,omitempty"`
	ModelLimits map[string]probeLimits `json:"model_limits,omitempty"`
	Messages    []struct {
		Role    string       `json:"role"`
		Content probeContent `json:"content"`
	} `json:"messages,omitempty"`
	USD   *probeUSD   `json:"usd,omitempty"`
	Leaky *probeLeaky `json:"leaky,omitempty"`
}

func TestExplain(t *testing.T) {
	tests := []struct {
		body, path, msg string
	}{
		{`{"name":`, "name", "name: invalid JSON at byte 8: unexpected end of input"},
		{`{"name":"x"} x`, "", "invalid JSON at byte 13: invalid character 'x' after top-level value"},
		{`{"name":"a","name":"b"}`, "", `duplicate field "name"`},
		{`{"messages":[{"role":"user","role":"x"}]}`, "messages[0]", `messages[0]: duplicate field "role"`},
		{`[1]`, "", "expected an object, got an array"},
		{`{"modles":[]}`, "", `unknown field "modles"; expected one of name, models, expires_at, stream, limits, model_limits, messages, usd, leaky`},
		{`{"limits":{"rpn":1}}`, "limits", `limits: unknown field "rpn"; expected one of rpm, max, budget_period`},
		{`{"expires_at":"tomorrow"}`, "expires_at", `expires_at: expected an RFC 3339 time such as 2026-01-02T15:04:05Z, got "tomorrow"`},
		{`{"expires_at":5}`, "expires_at", "expires_at: expected an RFC 3339 time such as 2026-01-02T15:04:05Z, got a number"},
		{`{"name":"a","messages":[{"role":"user"},{"role":1}]}`, "messages[1].role", "messages[1].role: expected a string, got a number"},
		{`{"messages":[{"role":"user","content":5}]}`, "messages[0].content", "messages[0].content: expected a string or an array of content blocks, got a number"},
		{`{"messages":{}}`, "messages", "messages: expected an array, got an object"},
		{`{"models":[true]}`, "models[0]", "models[0]: expected a string, got a boolean"},
		{`{"stream":"yes"}`, "stream", "stream: expected true or false, got a string"},
		{`{"limits":null,"name":null}`, "", ""},
		{`{"limits":{"rpm":1.5}}`, "limits.rpm", "limits.rpm: expected an integer, got 1.5"},
		{`{"limits":{"rpm":1e100}}`, "limits.rpm", "limits.rpm: expected an integer from -9223372036854775808 to 9223372036854775807, got 1e100"},
		{`{"limits":{"max":300}}`, "limits.max", "limits.max: expected a non-negative integer from 0 to 255, got 300"},
		{`{"limits":{"max":-1}}`, "limits.max", "limits.max: expected a non-negative integer from 0 to 255, got -1"},
		{`{"model_limits":{"gpt-4.1":{"rpm":"x"}}}`, `model_limits["gpt-4.1"].rpm`, `model_limits["gpt-4.1"].rpm: expected an integer, got a string`},
		{`{"model_limits":{"claude":{"rpm":"x"}}}`, `model_limits.claude.rpm`, `model_limits.claude.rpm: expected an integer, got a string`},
		{`{"usd":"abc"}`, "usd", `usd: "abc" is not an amount of USD such as 25 or 0.5`},
		{`{"leaky":1}`, "leaky", "leaky: expected a valid value, got a number"},
		{`{"name":"` + strings.Repeat("x", 100) + `"` + `,"limits":{"rpm":"` + strings.Repeat("y", 100) + `"}}`, "limits.rpm", "limits.rpm: expected an integer, got a string"},
		{"{\"name\":\"a\xffb\"}", "name", "name: invalid JSON at byte 10: invalid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			var v probeBody
			err := UnmarshalStrict([]byte(tc.body), &v)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("decoded; want an error")
			}
			path, msg := Explain(err)
			if path != tc.path || msg != tc.msg {
				t.Errorf("Explain:\n got %q, %q\nwant %q, %q\n(library: %v)", path, msg, tc.path, tc.msg, err)
			}
			assertNoInternals(t, msg)
		})
	}
}

// A value decoded on its own reports paths from where it sits in the body,
// and no byte offset (it would count from the value, not the body).
func TestExplainAt(t *testing.T) {
	var v struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	for _, tc := range []struct{ body, path, msg string }{
		{`{"function":{"name":5}}`, "tool_choice.function.name", "tool_choice.function.name: expected a string, got a number"},
		{`[1]`, "tool_choice", "tool_choice: expected an object, got an array"},
		{`{"function":`, "tool_choice.function", "tool_choice.function: invalid JSON: unexpected end of input"},
	} {
		path, msg := ExplainAt("tool_choice", Unmarshal([]byte(tc.body), &v))
		if path != tc.path || msg != tc.msg {
			t.Errorf("%s: got %q, %q; want %q, %q", tc.body, path, msg, tc.path, tc.msg)
		}
	}
	if path, msg := ExplainAt("x", errors.New("json: something else")); path != "x" || msg != "x: invalid JSON" {
		t.Errorf("foreign error: got %q, %q", path, msg)
	}
}

func TestPath(t *testing.T) {
	for _, tc := range []struct {
		base string
		ptr  jsontext.Pointer
		want string
	}{
		{"", "", ""},
		{"", "/messages/1/role", "messages[1].role"},
		{"", "/0/a", "[0].a"},
		{"input", "/3/content/0", "input[3].content[0]"},
		{"", "/model_limits/gpt-4.1/rpm", `model_limits["gpt-4.1"].rpm`},
		{"", "/a~1b/007", `["a/b"].007`},
	} {
		if got := Path(tc.base, tc.ptr); got != tc.want {
			t.Errorf("Path(%q, %q) = %q, want %q", tc.base, tc.ptr, got, tc.want)
		}
	}
}

// assertNoInternals fails when a client message names Go internals.
func assertNoInternals(t *testing.T, msg string) {
	t.Helper()
	for _, bad := range []string{"Go ", "json:", "jsontext", "unmarshal", "jsonx", "time.Time", "probe"} {
		if strings.Contains(msg, bad) {
			t.Errorf("message %q contains %q", msg, bad)
		}
	}
}
