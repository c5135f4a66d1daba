// Package promptcache places prompt-cache breakpoints in Anthropic Messages
// requests, so that a conversation resent turn after turn is read from the
// upstream's cache instead of billed as fresh input.
//
// Anthropic caches a prompt's prefix only up to a block marked with
// cache_control, at most four marks a request, and only when the prefix is
// at least a model's minimum length. The placement is: the end of the
// tools, the end of the system prompt, and a rolling pair on the latest
// two user turns, so that each turn reads the prefix the previous turn
// wrote and writes its own. The policy (Choose) is shared by the two
// appliers: one edits a typed request on the translation lane, the other
// splices the marks into a client's bytes on the pass-through lane.
package promptcache

import "fmt"

// Mode says whether tollgate adds breakpoints to a model's requests.
type Mode uint8

const (
	// ModeDefault is auto on translated requests and client on
	// pass-through ones.
	ModeDefault Mode = iota
	// ModeAuto adds breakpoints: up to the limit, counting the client's,
	// on translated requests; on pass-through requests only when the
	// client set none.
	ModeAuto
	// ModeClient keeps what the client marked and adds nothing.
	ModeClient
	// ModeOff adds nothing either (the client's own marks still reach the
	// upstream; tollgate sends no cache hints of its own, not even a
	// prompt_cache_key to OpenAI).
	ModeOff
)

var modeNames = []string{ModeDefault: "", ModeAuto: "auto", ModeClient: "client", ModeOff: "off"}

func (m Mode) String() string { return modeNames[m] }

// UnmarshalText accepts auto, client or off.
func (m *Mode) UnmarshalText(b []byte) error {
	for i, n := range modeNames {
		if n == string(b) {
			*m = Mode(i)
			return nil
		}
	}
	return fmt.Errorf("%q is not one of auto, client, off", b)
}

// TTL is how long a written cache entry lives.
type TTL uint8

const (
	TTL5m TTL = iota // the API's default
	TTL1h
)

// UnmarshalText accepts 5m or 1h.
func (t *TTL) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "5m":
		*t = TTL5m
	case "1h":
		*t = TTL1h
	default:
		return fmt.Errorf("%q is not one of 5m, 1h", b)
	}
	return nil
}

func (t TTL) String() string {
	if t == TTL1h {
		return "1h"
	}
	return "5m"
}

// mark is the cache_control value of a breakpoint with this TTL.
func (t TTL) mark() []byte {
	if t == TTL1h {
		return []byte(`{"type":"ephemeral","ttl":"1h"}`)
	}
	return []byte(`{"type":"ephemeral"}`)
}

// Settings are a model's prompt_cache configuration.
type Settings struct {
	Mode Mode `yaml:"mode"`
	TTL  TTL  `yaml:"ttl"`
}

// For resolves the mode of one request: translated or passed through.
func (s Settings) For(translated bool) Mode {
	if s.Mode != ModeDefault {
		return s.Mode
	}
	if translated {
		return ModeAuto
	}
	return ModeClient
}

// DefaultMinTokens is the shortest prefix cached when a model's
// capabilities give no minimum: the smallest Anthropic documents.
const DefaultMinTokens = 1024

// Options are what one placement needs.
type Options struct {
	TTL TTL
	// MinTokens is the model's minimum cacheable prompt length.
	MinTokens int64
	// OnlyIfNone: add nothing when the client marked anything (the
	// pass-through lane keeps a client's own choice).
	OnlyIfNone bool
}

func (o Options) min() int64 {
	if o.MinTokens > 0 {
		return o.MinTokens
	}
	return DefaultMinTokens
}
