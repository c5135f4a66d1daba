// Package dialect is the table of the wire protocols tollgate speaks. A
// dialect is data: its endpoints, the body members the gateway reads
// without decoding a request, its error envelope, request-id and
// rate-limit headers, how usage is read from its answers and streams (the
// tap), how a pass-through request is prepared, and how /v1/models looks
// in it. The gateway asks the table; it never branches on a protocol.
//
// Two registries hang off it: the dialects (All, Register) and the
// translators between them, keyed by (client dialect, upstream dialect)
// (For, RegisterPair). Adding a protocol is a new file here (its entry),
// its wire types under internal/api, its translator pairs, and one line in
// registry.go.
package dialect

import (
	"net/http"
	"time"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/promptcache"
	"github.com/tollgate/tollgate/internal/tokens"
)

// Dialect describes one wire protocol. Entries are made once, at start-up,
// and never change; compare dialects by pointer.
type Dialect struct {
	// Name identifies the protocol in logs, ledger records, metrics and
	// traces: "anthropic", "openai".
	Name string

	// Endpoints are the fixed routes clients of this protocol call; an
	// upstream-only protocol has none, nor has a URL-addressed one
	// (Addressed).
	Endpoints []Endpoint
	// Claims reports whether a request to a route every dialect shares
	// (GET /v1/models, an unknown path) wants this dialect's answers.
	// Nil never claims; the Default dialect answers what none claims.
	Claims func(r *http.Request) bool
	// Addressed, when set, makes the protocol URL-addressed: its clients
	// name the model and the operation in the path, under these model
	// routes ("/v1beta/models"), as {route}/{model}:{method}. The gateway
	// serves GET {route} and GET {route}/{model} (the model list) and
	// POSTs under {route}/ through Address.
	Addressed []string
	// Address reads the model and the operation of a POST to
	// {route}/{rest} of a URL-addressed protocol from rest and the
	// request's query. An error is a *ScanError for the client.
	Address func(r *http.Request, rest string) (Address, error)
	// KeyHeaders are the headers that carry a client's key as it is
	// (canonical form), besides Authorization: Bearer; nil is X-Api-Key.
	// KeyQuery is a query parameter that may carry it instead ("" none).
	KeyHeaders []string
	KeyQuery   string
	// RequiredHeader, when set, must be on every request to Endpoints
	// (anthropic-version).
	RequiredHeader string
	// Fields names the request members the gateway reads.
	Fields Fields
	// ForwardHeaders are the client headers, besides user-agent and
	// accept, that reach an upstream of this dialect on the pass-through
	// lane (canonical form).
	ForwardHeaders []string
	// BetaHeader is the forwarded header that turns on features of the
	// upstream account (anthropic-beta); configuration may allowlist them.
	BetaHeader string
	// Prepare adjusts a pass-through request before it is sent; nil sends
	// the client's bytes with only the model rewritten. It reads the
	// client's body; spliced returns the body with the upstream's model in
	// it (a copy), for Prepared.Body.
	Prepare func(body []byte, s Scanned, spliced func() []byte) (Prepared, error)

	// Affinity reads what identifies a request's conversation, for sticky
	// routing (see package affinity); nil: requests are spread at random.
	// cacheKey: the client named it (prompt_cache_key), which outranks a
	// stored conversation's own key.
	Affinity func(s *Scanned) (k affinity.Key, cacheKey bool)
	// CacheHints sets a pass-through request's hints for the upstream's
	// prompt cache: it scopes the client's own (an OpenAI
	// prompt_cache_key) to its tenant, and adds what the model's
	// prompt_cache mode auto adds: breakpoints (Anthropic), a
	// prompt_cache_key (OpenAI). It returns the new body (nil: unchanged)
	// and how many breakpoints it added (-1 when it adds none, or in a
	// dialect without breakpoints). Nil: the dialect has no hints.
	CacheHints func(body []byte, h CacheHints) (out []byte, breakpoints int, err error)

	// RequestIDHeader carries tollgate's request id in answers the gateway
	// makes or translates (canonical form).
	RequestIDHeader string
	// Error renders an error envelope.
	Error func(e Error) []byte
	// RateLimit names the rate-limit headers of answers.
	RateLimit RateLimitHeaders
	// ModelList and Model render GET /v1/models and /v1/models/{id}.
	ModelList func(ids []string, created time.Time) any
	Model     func(id string, created time.Time) any
	// ModelListPage, when set, serves a paged list instead of ModelList:
	// size and token are the client's page size and page token (both may
	// be ""). An error is a *ScanError for the client.
	ModelListPage func(ids []string, size, token string) (any, error)

	// Usage reads the usage of a whole (non-stream) answer.
	Usage func(u *meter.Usage, body []byte)
	// NewTap starts a tap over a stream in this dialect. With hideUsage,
	// the usage the gateway asked for on the client's behalf is kept from
	// the client (see Prepared.HideUsage).
	NewTap func(hideUsage bool) Tap
	// Generated are the gjson paths of generated text in this dialect's
	// stream events: a stream that ends without usage is estimated from
	// them.
	Generated []string
	// CountPrompt counts a request's prompt with the tokenizer.
	CountPrompt func(c *tokens.Counter, body []byte)
	// Unpriced names a feature a request turns on that providers bill
	// apart from tokens, at prices the gateway does not know (a server
	// tool billed per use, the priority tier), for a USD budget to refuse;
	// "" when it turns on none. Nil: the protocol has none.
	Unpriced func(body []byte) string
	// Session reads the agent session a request belongs to, as the client
	// names it in its headers or body (h, body: the client's): at most
	// MaxSessionID bytes of printable ASCII (SessionID), "" when it names
	// none. A user's id is not a session. Nil: the protocol names none.
	Session func(h http.Header, body []byte) string
	// TokenCount renders the answer of a CountTokens endpoint.
	TokenCount func(n int) []byte
	// CountRequest turns a CountTokens body into the Generate request
	// whose prompt it counts, for a translator to read; nil when the two
	// are the same shape.
	CountRequest func(body []byte) ([]byte, error)
	// ReadTokenCount reads an upstream's CountTokens answer in this
	// dialect; nil when the translation lane counts locally instead.
	ReadTokenCount func(body []byte) (n int, ok bool)
	// Ping is a keep-alive event sent to clients of this dialect while a
	// translated upstream is silent; nil when the protocol has none.
	Ping []byte
}

func (d *Dialect) String() string {
	if d == nil {
		return "unknown"
	}
	return d.Name
}

// Op is the operation an endpoint performs.
type Op uint8

const (
	// Generate asks a model for an answer (a message, a completion).
	Generate Op = iota + 1
	// CountTokens counts a request's input tokens without generating.
	CountTokens
	// Compact asks the upstream to compact a conversation into fewer
	// items (the Responses API's /v1/responses/compact). No translator
	// speaks it: only an upstream of the client's own protocol serves it.
	Compact
	// Embed turns inputs into vectors (OpenAI's /v1/embeddings). Its
	// answers are whole, never streamed, and cost input tokens only.
	Embed
	// The rest of OpenAI's API, passed through to upstreams that serve it
	// (no translator speaks them): legacy completions, moderations,
	// images, speech, transcription and translation of audio, and
	// reranking (Cohere's and Jina's shape).
	Complete
	Moderate
	GenerateImage
	EditImage
	Speak
	Transcribe
	TranslateAudio
	Rerank
)

// Endpoint is one route a dialect's clients call: POST Path.
type Endpoint struct {
	Path string
	Op   Op
	// RequireMaxOutput: the request must bound its output (Anthropic's
	// max_tokens on /v1/messages): Fields.MaxOutput[0] is required.
	RequireMaxOutput bool
	// Fields, when set, replaces the dialect's Fields for this endpoint
	// (an operation whose body is not a conversation).
	Fields *Fields
	// Multipart: the body is multipart/form-data (a file upload), read as
	// a stream, its model in a form field.
	Multipart bool
	// Usage, when set, reads a whole answer's usage in place of the
	// dialect's; Unmetered: the answer is not JSON (audio) and is relayed
	// unread. RequestUsage reads what the request itself is billed by
	// (the characters to speak).
	Usage        func(u *meter.Usage, answer []byte)
	Unmetered    bool
	RequestUsage func(u *meter.Usage, body []byte)
}

// PassThroughOnly reports whether op is served only by upstreams that
// take it as the client sent it.
func (op Op) PassThroughOnly() bool { return op >= Complete }

// Address is what the path of a URL-addressed request says.
type Address struct {
	Model  string
	Op     Op
	Stream bool
	// Fields, when set, replaces the dialect's Fields for this operation
	// (a count whose body may hold its conversation elsewhere).
	Fields *Fields
	// Frame, when set, wraps the stream's tap: the client asked for the
	// stream in another framing than the upstream's server-sent events.
	// The tap it returns is a Framer.
	Frame func(Tap) Tap
}

// Framer is a tap that changes the stream's framing, and so its content
// type.
type Framer interface {
	Tap
	ContentType() string
}

// Apply makes s say what the path said: the model and the stream flag
// come from the URL, and no member of the body holds the model (so the
// pass-through lane sends the body as it is). A nil a leaves s as it is.
func (a *Address) Apply(s *Scanned) {
	if a == nil {
		return
	}
	s.Model, s.HasModel, s.ModelStart, s.ModelEnd = []byte(a.Model), true, 0, 0
	s.Stream = a.Stream
}

// InBody reports whether the scanned model is a member of the body.
func (s *Scanned) InBody() bool { return s.ModelEnd > 0 }

// CacheHints are what a pass-through request's cache hints are made of.
type CacheHints struct {
	// Breakpoints: add breakpoints as Options say.
	Breakpoints bool
	Options     promptcache.Options
	// Key is the request's prompt_cache_key, derived within its tenant
	// from what the client named (or its conversation): it replaces the
	// client's own, so that a key a client names routes only its tenant's
	// requests together upstream; "" leaves the client's as it is.
	Key string
	// AddKey: send Key also when the client sent none.
	AddKey bool
}

// Prepared is what Prepare changed in a pass-through request.
type Prepared struct {
	// Body replaces the request body; nil keeps it.
	Body []byte
	// Dropped names what was left out (for tollgate-dropped-params).
	Dropped string
	// HideUsage: the gateway asked for usage the client did not; the tap
	// keeps it from the client.
	HideUsage bool
}

// Tap watches a stream event by event as it is relayed: it reads usage
// without re-encoding the bytes, notices the stream's end, and may drop,
// replace or translate events. It is made per stream and is not safe for
// concurrent use. A pass-through tap must not allocate per event on the
// common path. The translators' stream machines are taps too.
type Tap interface {
	// Feed inspects one complete upstream event and returns what the
	// client gets instead: ev itself (the usual case), other bytes, or
	// nil. The result is valid until the next call.
	Feed(ev []byte) []byte
	// StartError reports whether ev, the stream's first data event, is an
	// error; if so it returns the HTTP status and JSON body to answer with
	// instead of starting the stream.
	StartError(ev []byte) (status int, body []byte, ok bool)
	// Close is called when the upstream body ends (eof) or fails. It
	// returns the bytes that end the client's stream (an error event
	// saying msg when the stream did not finish) and whether it ended
	// cleanly.
	Close(eof bool, msg string) (tail []byte, clean bool)
	// Usage is the usage read so far.
	Usage() meter.Usage
}

// RateLimitHeaders names a dialect's rate-limit headers (canonical form).
type RateLimitHeaders struct {
	// Requests and Tokens are the limit, remaining and reset headers.
	Requests, Tokens [3]string
	// Reset formats when a window resets.
	Reset func(at, now time.Time) string
	// Prefix starts every rate-limit header of the protocol, so that an
	// upstream's own can be told apart.
	Prefix string
}
