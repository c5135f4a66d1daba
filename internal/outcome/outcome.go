// Package outcome is what the gateway knows of a data-plane request once
// it has ended: one value, made once, from which the log line, the usage
// ledger's record, the metrics and the trace span are all made, so that
// they can never disagree.
package outcome

import (
	"time"

	"github.com/tollgate/tollgate/internal/meter"
)

// Request is the outcome of one request. Strings the client sent are
// already clipped.
type Request struct {
	ID string
	// Arrived is when the request arrived, on the process's clock.
	Arrived      time.Time
	Method, Path string
	// ClientProtocol is the dialect the client spoke ("anthropic", "openai").
	ClientProtocol string
	// KeyID is the virtual key's id; "" for the master key, Unauthenticated
	// for a request no key was accepted for.
	KeyID string
	// UserID is the user the request was made for (signed in with a token
	// of theirs, or with a key of theirs), TeamID the team it is charged
	// to, SessionID the agent session the client named; "" for none.
	UserID, TeamID, SessionID string
	// Model is the model as the client named it; Routed the configured
	// model it resolved to ("" when none: an unknown name).
	Model, Routed string
	// Canonical is the configured model Model names, also when the key may
	// not use it (Routed is then ""): what usage is grouped by.
	Canonical string
	// Provider, UpstreamModel and UpstreamProtocol describe the last
	// attempt's target; Lane is "passthrough", "translated", or "" when no
	// upstream was chosen.
	Provider, UpstreamModel, UpstreamProtocol, Lane string
	Stream                                          bool
	// Status is what the client got, 0 if it left first; UpstreamStatus
	// what the last attempt's upstream answered, 0 without an answer.
	Status, UpstreamStatus int
	// ErrorType classifies how the request ended badly, "" when it did not.
	ErrorType  string
	Err        error // the cause, for the log
	ClientGone bool

	Usage meter.Usage
	// UsageEstimated: the upstream never reported usage (a stream cut, or
	// left by its client); the gateway counted it.
	UsageEstimated bool
	// Cost is in nano-USD; CostKnown is false when the target is unpriced.
	Cost      int64
	CostKnown bool
	// Savings is what prompt caching saved, in nano-USD: the cache tokens
	// billed at the input price less what they cost (pricing's Savings);
	// negative when cache writes cost more than cache reads saved, 0
	// without cache tokens. SavingsKnown is false when a cache bucket with
	// tokens, or the input, has no price. ReadSavings and WritePremium are
	// its gross parts, each ≥ 0: Savings = ReadSavings − WritePremium.
	Savings                   int64
	SavingsKnown              bool
	ReadSavings, WritePremium int64

	// Latency is the whole request; FirstByte until the answer's status
	// was sent; Upstream the time spent waiting on upstreams.
	Latency, FirstByte, Upstream time.Duration
	Retries                      int // attempts after the first
	Attempts                     []Attempt

	ClientIP, UserAgent string
}

// Unauthenticated is the KeyID of a request refused before a key was
// accepted (no key, a wrong one, a method not allowed): it is charged to
// no key and listed apart from the master key's requests. Virtual key ids
// begin with "key_", so it is never one.
const Unauthenticated = "unauthenticated"

// Overhead is the gateway's own time: the request's, less its upstreams'.
func (r *Request) Overhead() time.Duration { return max(r.Latency-r.Upstream, 0) }

// Attempt is one upstream attempt.
type Attempt struct {
	Target string        // provider/model
	Status int           // the upstream's status; 0 without an answer
	Error  string        // what went wrong; "" if nothing
	Time   time.Duration // the attempt's upstream time
}
