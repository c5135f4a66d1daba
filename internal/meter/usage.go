// Package meter holds the usage vocabulary shared by every lane: token counts
// by billing bucket, and their extraction from either protocol's usage object.
package meter

import "github.com/tidwall/gjson"

// Usage counts tokens by billing bucket. The buckets are disjoint except
// Reasoning, which is the part of Output spent on reasoning ("of which"):
// it is reported for visibility and billed as output unless priced.
//
// Protocols count differently and must not be mixed (a classic overbilling
// bug): Anthropic's input_tokens excludes cache reads and writes, while
// OpenAI's prompt_tokens includes cached tokens. Input here is always the
// fresh, uncached input.
type Usage struct {
	Input        int64 // fresh input tokens, billed at the input price
	CacheRead    int64 // input tokens read from the prompt cache
	CacheWrite5m int64 // input tokens written to the cache with the 5-minute TTL
	CacheWrite1h int64 // input tokens written to the cache with the 1-hour TTL
	Output       int64 // output tokens, reasoning included
	Reasoning    int64 // of Output, tokens spent on reasoning/thinking
}

// TotalInput is every input token, cached or not.
func (u Usage) TotalInput() int64 { return u.Input + u.CacheRead + u.CacheWrite5m + u.CacheWrite1h }

// IsZero reports whether no tokens were counted.
func (u Usage) IsZero() bool { return u == Usage{} }

// MergeAnthropic assigns the fields present in an Anthropic usage object
// (from a Messages response, message_start's message.usage, or
// message_delta's usage). Absent fields keep their value: message_delta
// repeats only what changed, and its counts are cumulative, so they are
// assigned, never added.
//
// cache_creation_input_tokens is split by TTL using the cache_creation
// breakdown when present; without it all cache writes are 5-minute writes
// (the default TTL).
func (u *Usage) MergeAnthropic(usage string) {
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

// SetOpenAI replaces u with an OpenAI usage object. OpenAI-compatible
// upstreams that send usage on several chunks repeat running totals, so the
// last object wins. Cached tokens are moved out of prompt_tokens into
// CacheRead; cache writes reported by compatible upstreams
// (prompt_tokens_details.cache_write_tokens / cache_creation_tokens) are
// moved into CacheWrite5m.
func (u *Usage) SetOpenAI(usage string) {
	obj := gjson.Parse(usage)
	if !obj.IsObject() {
		return
	}
	prompt := obj.Get("prompt_tokens").Int()
	cached := obj.Get("prompt_tokens_details.cached_tokens").Int()
	write := obj.Get("prompt_tokens_details.cache_write_tokens").Int()
	if write == 0 {
		write = obj.Get("prompt_tokens_details.cache_creation_tokens").Int()
	}
	*u = Usage{
		Input:        max(prompt-cached-write, 0),
		CacheRead:    cached,
		CacheWrite5m: write,
		Output:       obj.Get("completion_tokens").Int(),
		Reasoning:    obj.Get("completion_tokens_details.reasoning_tokens").Int(),
	}
}

// AnthropicEvent reads the usage an Anthropic stream event carries:
// message_start's message.usage (input and cache counts) and
// message_delta's usage (cumulative output, and any counts that changed).
// name is the event's name, data its JSON.
func (u *Usage) AnthropicEvent(name, data string) {
	switch name {
	case "message_start":
		u.MergeAnthropic(gjson.Get(data, "message.usage").Raw)
	case "message_delta":
		u.MergeAnthropic(gjson.Get(data, "usage").Raw)
	}
}

// SetResponses replaces u with an OpenAI Responses usage object (a
// response's usage, in its body or in a stream's terminal event).
// input_tokens includes cached tokens, which move to CacheRead;
// output_tokens includes reasoning tokens.
func (u *Usage) SetResponses(usage string) {
	obj := gjson.Parse(usage)
	if !obj.IsObject() {
		return
	}
	cached := obj.Get("input_tokens_details.cached_tokens").Int()
	*u = Usage{
		Input:     max(obj.Get("input_tokens").Int()-cached, 0),
		CacheRead: cached,
		Output:    obj.Get("output_tokens").Int(),
		Reasoning: obj.Get("output_tokens_details.reasoning_tokens").Int(),
	}
}

// SetGemini replaces u with a Gemini usageMetadata object. Gemini's
// promptTokenCount includes the cached tokens (cachedContentTokenCount)
// and leaves out the tokens of tool results it fetched itself
// (toolUsePromptTokenCount), which are billed as input; thoughts
// (thoughtsTokenCount) are output tokens that candidatesTokenCount does
// not include.
func (u *Usage) SetGemini(usage string) {
	obj := gjson.Parse(usage)
	if !obj.IsObject() {
		return
	}
	prompt := obj.Get("promptTokenCount").Int() + obj.Get("toolUsePromptTokenCount").Int()
	cached := obj.Get("cachedContentTokenCount").Int()
	thoughts := obj.Get("thoughtsTokenCount").Int()
	*u = Usage{
		Input:     max(prompt-cached, 0),
		CacheRead: cached,
		Output:    obj.Get("candidatesTokenCount").Int() + thoughts,
		Reasoning: thoughts,
	}
}
