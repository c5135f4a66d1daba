package openai

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/meter"
)

// SetUsage replaces u with a Chat Completions usage object; it leaves u
// as it is when usage is not an object. Compatible upstreams that send
// usage on several chunks repeat running totals, so the last object wins.
// prompt_tokens includes cached tokens, which are moved out of it into
// CacheRead; cache writes reported by compatible upstreams
// (prompt_tokens_details.cache_write_tokens / cache_creation_tokens) are
// moved into CacheWrite5m.
func SetUsage(u *meter.Usage, usage string) {
	obj := gjson.Parse(usage)
	if !obj.IsObject() {
		return
	}
	if !obj.Get("prompt_tokens").Exists() && obj.Get("input_tokens").Exists() {
		// The images and audio endpoints' usage (their streams' last
		// events too): input_tokens and output_tokens.
		in, cached := obj.Get("input_tokens").Int(), obj.Get("input_tokens_details.cached_tokens").Int()
		*u = meter.Usage{Input: max(in-cached, 0), CacheRead: cached, Output: obj.Get("output_tokens").Int()}
		return
	}
	prompt := obj.Get("prompt_tokens").Int()
	cached := obj.Get("prompt_tokens_details.cached_tokens").Int()
	write := obj.Get("prompt_tokens_details.cache_write_tokens").Int()
	if write == 0 {
		write = obj.Get("prompt_tokens_details.cache_creation_tokens").Int()
	}
	*u = meter.Usage{
		Input:        max(prompt-cached-write, 0),
		CacheRead:    cached,
		CacheWrite5m: write,
		Output:       obj.Get("completion_tokens").Int(),
		Reasoning:    obj.Get("completion_tokens_details.reasoning_tokens").Int(),
	}
}
