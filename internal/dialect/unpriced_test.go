package dialect

import (
	"strings"
	"testing"
)

func TestUnpriced(t *testing.T) {
	tests := []struct {
		name     string
		unpriced func([]byte) string
		body     string
		want     string
	}{
		{"messages: web search", messagesUnpriced, `{"model":"m","tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[]}`, "the server tool web_search_20250305"},
		{"messages: web fetch after a function", messagesUnpriced, `{"tools":[{"name":"f","input_schema":{}},{"type":"web_fetch_20250910","name":"web_fetch"}]}`, "the server tool web_fetch_20250910"},
		{"messages: code execution", messagesUnpriced, `{"tools":[{"type":"code_execution_20250825","name":"code_execution"}]}`, "the server tool code_execution_20250825"},
		{"messages: the words in text", messagesUnpriced, `{"messages":[{"role":"user","content":"web_search code_execution priority"}]}`, ""},
		{"messages: a tool named like one", messagesUnpriced, `{"tools":[{"name":"web_search","input_schema":{}}]}`, ""},
		// Members of other protocols: a Messages upstream refuses them,
		// and translators drop them.
		{"messages: web_search_options", messagesUnpriced, `{"web_search_options":{}}`, ""},
		{"messages: service tier", messagesUnpriced, `{"service_tier":"priority"}`, ""},

		{"chat: server tool", chatUnpriced, `{"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, "the server tool web_search_20250305"},
		{"chat: web_search_options", chatUnpriced, `{"web_search_options":{},"messages":[]}`, "web_search_options"},
		{"chat: priority", chatUnpriced, `{"service_tier":"priority","messages":[]}`, `service_tier "priority"`},
		{"chat: flex", chatUnpriced, `{"service_tier":"flex","messages":[{"role":"user","content":"web_search priority"}]}`, ""},
		{"chat: functions", chatUnpriced, `{"tools":[{"type":"function","function":{"name":"web_fetch"}}]}`, ""},

		{"responses: web search", responsesUnpriced, `{"tools":[{"type":"web_search"}],"input":"x"}`, "the server tool web_search"},
		{"responses: web search preview", responsesUnpriced, `{"tools":[{"type":"function","name":"f"},{"type":"web_search_preview_2025_03_11"}]}`, "the server tool web_search_preview_2025_03_11"},
		{"responses: priority", responsesUnpriced, `{"service_tier":"priority","input":"x"}`, `service_tier "priority"`},
		{"responses: default tier", responsesUnpriced, `{"service_tier":"default","input":"web_search"}`, ""},
		{"responses: web_search_options is not a member", responsesUnpriced, `{"web_search_options":{},"input":"x"}`, ""},

		{"gemini: google search", geminiUnpriced, `{"contents":[],"tools":[{"functionDeclarations":[]},{"googleSearch":{}}]}`, "the server tool googleSearch"},
		{"gemini: proto name", geminiUnpriced, `{"tools":[{"google_search_retrieval":{"dynamic_retrieval_config":{}}}]}`, "the server tool google_search_retrieval"},
		{"gemini: maps", geminiUnpriced, `{"tools":[{"googleMaps":{}}]}`, "the server tool googleMaps"},
		{"gemini: enterprise web search", geminiUnpriced, `{"tools":[{"enterpriseWebSearch":{}}]}`, "the server tool enterpriseWebSearch"},
		{"gemini: enterprise web search, proto name", geminiUnpriced, `{"tools":[{"enterprise_web_search":{}}]}`, "the server tool enterprise_web_search"},
		// A name spelled with escapes is the same name to the upstream.
		{"gemini: escaped google search", geminiUnpriced, `{"tools":[{"\u0067oogleSearch":{}}]}`, "the server tool googleSearch"},
		{"gemini: escaped enterprise web search", geminiUnpriced, `{"tools":[{"\u0065nterpriseWebSearch":{}}]}`, "the server tool enterpriseWebSearch"},
		{"messages: escaped web search", messagesUnpriced, `{"tools":[{"type":"web\u005fsearch_20250305"}]}`, "the server tool web_search_20250305"},
		{"chat: escaped code execution", chatUnpriced, `{"tools":[{"type":"\u0063ode_execution_x"}]}`, "the server tool code_execution_x"},
		{"responses: escaped web search", responsesUnpriced, `{"tools":[{"type":"w\u0065b_search"}]}`, "the server tool web_search"},
		{"gemini: code execution and URL context are tokens", geminiUnpriced, `{"tools":[{"codeExecution":{}},{"urlContext":{}}],"contents":[{"parts":[{"text":"googleSearch"}]}]}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.unpriced([]byte(tc.body)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The client dialects refuse what they name.
func TestUnpricedWired(t *testing.T) {
	for _, d := range []*Dialect{Messages, Chat, Responses} {
		if got := d.Unpriced([]byte(`{"tools":[{"type":"web_search_x"}]}`)); got != "the server tool web_search_x" {
			t.Errorf("%s: %q", d, got)
		}
	}
}

// What Unpriced names is in the request: the cheap look before parsing
// never hides a feature that is there, and a feature is never made up.
func FuzzUnpriced(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"type":"web_search_20250305"}]}`, `{"web_search_options":null}`, `{"service_tier":"priority"}`,
		`{"tools":[{"googleSearch":{}}]}`, `{"tools":{"a":{"type":"code_execution"}}}`, `{"tools":"web_"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, u := range []func([]byte) string{messagesUnpriced, chatUnpriced, responsesUnpriced, geminiUnpriced} {
			got := u(body)
			name := strings.TrimPrefix(got, "the server tool ")
			if name == `service_tier "priority"` {
				name = "priority"
			}
			// (A name written with escapes reads otherwise in the bytes.)
			if !strings.Contains(string(body), name) && !strings.Contains(string(body), `\`) {
				t.Errorf("%q: %q, not in the request", body, got)
			}
		}
	})
}
