package gemini

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/meter"
)

// SetUsage replaces u with a usageMetadata object; it leaves u as it is
// when usage is not an object. promptTokenCount includes the cached
// tokens (cachedContentTokenCount) and leaves out the tokens of tool
// results Gemini fetched itself (toolUsePromptTokenCount), which are
// billed as input; thoughts (thoughtsTokenCount) are output tokens that
// candidatesTokenCount does not include.
func SetUsage(u *meter.Usage, usage string) {
	obj := gjson.Parse(usage)
	if !obj.IsObject() {
		return
	}
	prompt := obj.Get("promptTokenCount").Int() + obj.Get("toolUsePromptTokenCount").Int()
	cached := obj.Get("cachedContentTokenCount").Int()
	thoughts := obj.Get("thoughtsTokenCount").Int()
	*u = meter.Usage{
		Input:     max(prompt-cached, 0),
		CacheRead: cached,
		Output:    obj.Get("candidatesTokenCount").Int() + thoughts,
		Reasoning: thoughts,
	}
}
