package dialect

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
)

// What each dialect's Unpriced finds: the features of a request that
// providers bill apart from tokens, at prices the gateway does not know.

// perUseTools are the prefixes of the types of server tools billed per
// use: Anthropic's web_search_20250305, web_fetch_… and code_execution_…,
// the Responses API's web_search and web_search_preview; compatible Chat
// Completions upstreams take the same.
var perUseTools = [...]string{"web_search", "web_fetch", "code_execution"}

// mayUseTools is a cheap filter before gjson: false when no per-use tool
// can be named in body.
func mayUseTools(body []byte) bool {
	return bytes.Contains(body, []byte("web_")) || bytes.Contains(body, []byte("code_execution")) || escaped(body)
}

// escaped reports whether body may spell a name with \u escapes, which
// the byte filters before gjson cannot see ("\u0067oogleSearch" is
// googleSearch to every JSON reader): such a body is parsed.
func escaped(body []byte) bool { return bytes.Contains(body, []byte(`\u`)) }

// perUseTool names the first tool among types (tools[].type) that is
// billed per use; "" when none is.
func perUseTool(types gjson.Result) string {
	for _, t := range types.Array() {
		for _, p := range perUseTools {
			if strings.HasPrefix(t.Str, p) {
				return "the server tool " + t.Str
			}
		}
	}
	return ""
}

// messagesUnpriced: server tools billed per use.
func messagesUnpriced(body []byte) string {
	if !mayUseTools(body) {
		return "" // the common case, without parsing
	}
	return perUseTool(gjson.GetBytes(body, "tools.#.type"))
}

// chatUnpriced: server tools billed per use, web search options (search
// models bill each search), and the priority service tier.
func chatUnpriced(body []byte) string {
	if !mayUseTools(body) && !bytes.Contains(body, []byte("priority")) {
		return ""
	}
	r := gjson.GetManyBytes(body, "tools.#.type", "web_search_options", "service_tier")
	if t := perUseTool(r[0]); t != "" {
		return t
	}
	if r[1].Exists() {
		return "web_search_options"
	}
	if r[2].Str == "priority" {
		return `service_tier "priority"`
	}
	return ""
}

// responsesUnpriced: hosted tools billed per use, and the priority service
// tier.
func responsesUnpriced(body []byte) string {
	if !mayUseTools(body) && !bytes.Contains(body, []byte("priority")) {
		return ""
	}
	r := gjson.GetManyBytes(body, "tools.#.type", "service_tier")
	if t := perUseTool(r[0]); t != "" {
		return t
	}
	if r[1].Str == "priority" {
		return `service_tier "priority"`
	}
	return ""
}

// geminiPerUseTools are the members of a generateContent tool that turn on
// grounding, which Google bills per grounded prompt or search, under
// their JSON and proto names: Google Search, Google Maps, and Vertex AI's
// Web Grounding for Enterprise (enterpriseWebSearch, billed per grounded
// prompt). Code execution and URL context are billed as tokens.
var geminiPerUseTools = [...]string{
	"googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval", "googleMaps", "google_maps",
	"enterpriseWebSearch", "enterprise_web_search",
}

// geminiUnpriced: grounding tools billed per use.
func geminiUnpriced(body []byte) string {
	if !bytes.Contains(body, []byte("google")) && !bytes.Contains(body, []byte("enterprise")) && !escaped(body) {
		return "" // the common case, without parsing
	}
	var found string
	gjson.GetBytes(body, "tools").ForEach(func(_, t gjson.Result) bool {
		for _, name := range geminiPerUseTools {
			if t.Get(name).Exists() {
				found = "the server tool " + name
				return false
			}
		}
		return true
	})
	return found
}
