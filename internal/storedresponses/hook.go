// Package storedresponses keeps the answers of Responses API clients so
// that a later request can continue them (previous_response_id), and
// serves them back (GET and DELETE /v1/responses/{id}, GET
// /v1/responses/{id}/input_items). It is the Responses dialect's
// request-lifecycle hook (dialect.Lifecycle): the gateway calls it and
// knows nothing of what it stores.
//
// A response is kept (store defaults to true, as OpenAI's API has it) with
// the input items its request added and a link to the response it
// continued, owned by the key that made it. previous_response_id continues
// it on any lane: a Responses upstream that stored the response itself
// gets the id when the request goes to the same target; every other
// target gets the conversation, read back along the links, expanded into
// input items. Every answer names the id the client continued, whichever
// target served it. A conversation's requests are one agent session,
// named by its first response, unless the client names its own
// (dialect.SessionTurn).
//
// Every key shares an upstream's account, so an id is forwarded only for
// the key the gateway stored it for. Another key's id is not found, the
// same answer as an unknown id; an id the gateway never stored goes only
// to a provider with forward_unknown_response_ids. The same rules hold
// where a count of input tokens or a compaction names a response; their
// answers are not responses, and are not kept. A conversation of OpenAI's
// Conversations API (the conversation member) is never one the gateway
// made, so it too goes only to a provider that forwards unknown ids, and
// is refused elsewhere.
package storedresponses

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/store"
)

// Store keeps responses. *store.Store is one.
type Store interface {
	PutResponse(ctx context.Context, r store.Response) error
	ResponseByID(ctx context.Context, id, owner string, now time.Time) (store.Response, error)
	ResponseChain(ctx context.Context, id, owner string, now time.Time) ([]store.Response, error)
	ResponseKnown(ctx context.Context, id string) (bool, error)
	DeleteResponse(ctx context.Context, id, owner string) error
	PurgeResponses(ctx context.Context, now time.Time) (int64, error)
}

// Options configure a Hook.
type Options struct {
	// Store keeps the responses; nil: the gateway runs without a
	// database, keeps nothing, and refuses previous_response_id unless
	// the target forwards unknown ids.
	Store Store
	// Retention is how long a response is kept (30 days when 0).
	Retention time.Duration
	Logger    *slog.Logger
}

// Hook is the Responses dialect's request-lifecycle hook. It is safe for
// concurrent use.
type Hook struct {
	store     Store
	retention time.Duration
	log       *slog.Logger
	lastPurge atomic.Int64 // when expired responses were last deleted (unix ns)
}

var _ dialect.Lifecycle = (*Hook)(nil)

// New returns the hook.
func New(o Options) *Hook {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Hook{store: o.Store, retention: cmp.Or(o.Retention, 30*24*time.Hour), log: o.Logger}
}

// Routes are the stored-response endpoints (the POST endpoints under
// /v1/responses/ are more specific).
func (h *Hook) Routes() []dialect.Route {
	return []dialect.Route{
		{Pattern: "/v1/responses/{id}", Serve: h.storedResponse},
		{Pattern: "/v1/responses/{id}/input_items", Serve: h.inputItemList},
	}
}
