package anthropic

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/meter"
)

// MergeUsage assigns to u the fields present in a Messages usage object
// (from a Messages response, message_start's message.usage, or
// message_delta's usage). Absent fields keep their value: message_delta
// repeats only what changed, and its counts are cumulative, so they are
// assigned, never added.
//
// input_tokens excludes cache reads and writes, as meter.Usage.Input does.
// cache_creation_input_tokens is split by TTL using the cache_creation
// breakdown when present; without it all cache writes are 5-minute writes
// (the default TTL).
func MergeUsage(u *meter.Usage, usage string) {
	obj := gjson.Parse(usage)
	if !obj.IsObject() {
		return
	}
	if v := obj.Get("input_tokens"); v.Exists() {
		u.Input = v.Int()
	}
	if v := obj.Get("cache_read_input_tokens"); v.Exists() {
		u.CacheRead = v.Int()
	}
	if v := obj.Get("output_tokens"); v.Exists() {
		u.Output = v.Int()
	}
	if v := obj.Get("output_tokens_details.thinking_tokens"); v.Exists() {
		u.Reasoning = v.Int()
	}
	total := obj.Get("cache_creation_input_tokens")
	m5 := obj.Get("cache_creation.ephemeral_5m_input_tokens")
	h1 := obj.Get("cache_creation.ephemeral_1h_input_tokens")
	switch {
	case m5.Exists() || h1.Exists():
		u.CacheWrite5m, u.CacheWrite1h = m5.Int(), h1.Int()
		// Keep the total authoritative if the breakdown does not add up.
		if total.Exists() && total.Int() > u.CacheWrite5m+u.CacheWrite1h {
			u.CacheWrite5m = total.Int() - u.CacheWrite1h
		}
	case total.Exists():
		u.CacheWrite5m, u.CacheWrite1h = total.Int(), 0
	}
}

// MergeEventUsage reads into u the usage a Messages stream event carries:
// message_start's message.usage (input and cache counts) and
// message_delta's usage (cumulative output, and any counts that changed).
// name is the event's name, data its JSON.
func MergeEventUsage(u *meter.Usage, name, data string) {
	switch name {
	case "message_start":
		MergeUsage(u, gjson.Get(data, "message.usage").Raw)
	case "message_delta":
		MergeUsage(u, gjson.Get(data, "usage").Raw)
	}
}
