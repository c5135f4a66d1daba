package responses

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/meter"
)

// SetUsage replaces u with a Responses usage object (a response's usage,
// in its body or in a stream's terminal event); it leaves u as it is when
// usage is not an object. input_tokens includes cached tokens, which move
// to CacheRead; output_tokens includes reasoning tokens.
func SetUsage(u *meter.Usage, usage string) {
	obj := gjson.Parse(usage)
	if !obj.IsObject() {
		return
	}
	cached := obj.Get("input_tokens_details.cached_tokens").Int()
	*u = meter.Usage{
		Input:     max(obj.Get("input_tokens").Int()-cached, 0),
		CacheRead: cached,
		Output:    obj.Get("output_tokens").Int(),
		Reasoning: obj.Get("output_tokens_details.reasoning_tokens").Int(),
	}
}
