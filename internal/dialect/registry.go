package dialect

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/translate"
)

// builtin are the protocols tollgate speaks, one line each.
var builtin = []*Dialect{Messages, Chat, Responses, Gemini}

// builtinPairs are the translators between them, one line each: key is
// (client dialect, upstream dialect).
var builtinPairs = map[[2]*Dialect]*Translator{
	{Messages, Chat}: {Request: translate.MessagesBodyToChat, Response: translate.ChatAnswerToMessages,
		Stream: func(p *translate.Plan, _ int64) Tap { return translate.NewChatToMessagesStream(p) },
		Error:  translate.OpenAIErrorToAnthropicRetry},
	{Chat, Messages}: {Request: translate.ChatBodyToMessages, Response: translate.MessagesAnswerToChat,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewMessagesToChatStream(p, created) },
		Error:  translate.AnthropicErrorToOpenAI},
	{Responses, Chat}: {Request: translate.ResponsesBodyToChat, Response: translate.ChatAnswerToResponses,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewChatToResponsesStream(p, created) },
		Error:  translate.OpenAIErrorToOpenAI},
	{Responses, Messages}: {Request: translate.ResponsesBodyToMessages, Response: translate.MessagesAnswerToResponses,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewMessagesToResponsesStream(p, created) },
		Error:  translate.AnthropicErrorToOpenAI},
	{Chat, Responses}: {Request: translate.ChatBodyToResponses, Response: translate.ResponsesAnswerToChat,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewResponsesToChatStream(p, created) },
		Error:  translate.OpenAIErrorToOpenAI},
	{Messages, Responses}: {Request: translate.MessagesBodyToResponses, Response: translate.ResponsesAnswerToMessages,
		Stream: func(p *translate.Plan, _ int64) Tap { return translate.NewResponsesToMessagesStream(p) },
		Error:  translate.OpenAIErrorToAnthropicRetry},
	{Chat, Gemini}: {Request: translate.ChatBodyToGemini, Response: translate.GeminiAnswerToChat,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewGeminiToChatStream(p, created) },
		Error:  translate.GeminiErrorToOpenAI},
	{Responses, Gemini}: {Request: translate.ResponsesBodyToGemini, Response: translate.GeminiAnswerToResponses,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewGeminiToResponsesStream(p, created) },
		Error:  translate.GeminiErrorToOpenAI},
	{Messages, Gemini}: {Request: translate.MessagesBodyToGemini, Response: translate.GeminiAnswerToMessages,
		Stream: func(p *translate.Plan, _ int64) Tap { return translate.NewGeminiToMessagesStream(p) },
		Error:  translate.GeminiErrorToAnthropic},
	{Gemini, Messages}: {Request: translate.GeminiBodyToMessages, Response: translate.MessagesAnswerToGemini,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewMessagesToGeminiStream(p, created) },
		Error:  translate.AnthropicErrorToGemini},
	{Gemini, Chat}: {Request: translate.GeminiBodyToChat, Response: translate.ChatAnswerToGemini,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewChatToGeminiStream(p, created) },
		Error:  translate.OpenAIErrorToGemini},
	{Gemini, Responses}: {Request: translate.GeminiBodyToResponses, Response: translate.ResponsesAnswerToGemini,
		Stream: func(p *translate.Plan, created int64) Tap { return translate.NewResponsesToGeminiStream(p, created) },
		Error:  translate.OpenAIErrorToGemini},
}

// Default answers requests to shared routes that no dialect claims.
var Default = Chat

// Translator converts one client dialect's requests for an upstream of
// another dialect, and the upstream's answers back. Its functions are pure
// and safe for concurrent use; a Stream tap is made per stream.
type Translator struct {
	// Request translates a client body for target t into the upstream's
	// body, with the plan the answer needs. A body that cannot be
	// translated is a *translate.RequestError (400); when ctx (the
	// request's) ends first, it may stop with ctx's error.
	Request func(ctx context.Context, body []byte, t translate.Target) ([]byte, *translate.Plan, error)
	// Response translates a whole upstream answer: out, or, when the
	// client asked for a stream (plan.Stream), stream, the events of one.
	// An answer that cannot be translated is a *translate.UpstreamError.
	// created dates answers that carry a timestamp.
	Response func(body []byte, p *translate.Plan, created int64) (out, stream []byte, u meter.Usage, err error)
	// Stream starts the machine that translates an upstream stream.
	Stream func(p *translate.Plan, created int64) Tap
	// Error translates an upstream error answer (status 0: a stream's
	// error event) into the client's status and envelope; noRetry asks
	// the client not to retry (x-should-retry: false).
	Error func(status int, body []byte) (int, []byte, bool)
}

// table is an immutable snapshot of the registries, replaced whole when a
// dialect or pair is registered: readers on the request path take no lock.
type table struct {
	all   []*Dialect
	pairs map[[2]*Dialect]*Translator
}

var (
	mu      sync.Mutex // serialises registrations
	current atomic.Pointer[table]
)

func init() {
	t := &table{all: append([]*Dialect(nil), builtin...), pairs: make(map[[2]*Dialect]*Translator, len(builtinPairs))}
	for k, v := range builtinPairs {
		t.pairs[k] = v
	}
	current.Store(t)
}

// update replaces the table with a changed copy.
func update(change func(t *table)) {
	mu.Lock()
	defer mu.Unlock()
	old := current.Load()
	t := &table{all: append([]*Dialect(nil), old.all...), pairs: make(map[[2]*Dialect]*Translator, len(old.pairs)+1)}
	for k, v := range old.pairs {
		t.pairs[k] = v
	}
	change(t)
	current.Store(t)
}

// Register adds a dialect to the table. Register at start-up, before the
// gateway is built: its endpoints are routed when the gateway is made.
func Register(d *Dialect) *Dialect {
	update(func(t *table) { t.all = append(t.all, d) })
	return d
}

// RegisterPair adds the translator for clients of from calling an upstream
// that speaks to.
func RegisterPair(from, to *Dialect, tr *Translator) {
	update(func(t *table) { t.pairs[[2]*Dialect{from, to}] = tr })
}

// All lists the dialects in the order they were registered. The slice is
// shared; callers must not change it.
func All() []*Dialect { return current.Load().all }

// For returns the translator for clients of from on an upstream of to;
// nil when there is none.
func For(from, to *Dialect) *Translator { return current.Load().pairs[[2]*Dialect{from, to}] }

// ForRequest picks the dialect whose answers a request to a shared route
// gets: the first that claims it, else Default.
func ForRequest(r *http.Request) *Dialect {
	for _, d := range current.Load().all {
		if d.Claims != nil && d.Claims(r) {
			return d
		}
	}
	return Default
}

// IsRateLimitHeader reports whether an upstream response header is one of
// a protocol's rate-limit headers.
func IsRateLimitHeader(k string) bool {
	for _, d := range current.Load().all {
		if p := d.RateLimit.Prefix; p != "" && len(k) > len(p) && k[:len(p)] == p {
			return true
		}
	}
	return false
}
