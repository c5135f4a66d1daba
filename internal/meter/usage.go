// Package meter holds the usage vocabulary shared by every lane: token
// counts by billing bucket. Each protocol's wire package reads its own
// usage object into a Usage (anthropic.MergeUsage, openai.SetUsage,
// responses.SetUsage, gemini.SetUsage).
package meter

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

	// Units counts what an endpoint bills apart from tokens, of kind Unit
	// (one of the Unit constants): images made, seconds of audio
	// transcribed, characters spoken, search queries ranked.
	Units int64  `json:",omitzero"`
	Unit  string `json:",omitzero"`
}

// The kinds of Usage.Units.
const (
	UnitImage     = "image"
	UnitSecond    = "second"
	UnitCharacter = "character"
	UnitQuery     = "query"
)

// TotalInput is every input token, cached or not.
func (u Usage) TotalInput() int64 { return u.Input + u.CacheRead + u.CacheWrite5m + u.CacheWrite1h }

// IsZero reports whether no tokens were counted.
func (u Usage) IsZero() bool { return u == Usage{} }
