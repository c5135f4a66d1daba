package storedresponses

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/store"
)

// turn is one Responses request's stored state.
type turn struct {
	h     *Hook
	ctx   context.Context     // the request's, for its values: storing outlasts a client that left
	req   dialect.TurnRequest // as it arrived (Body and Scan the client's)
	store bool                // keep the response (store is not false, and there is a store)
	input []byte              // the input items the request adds, as a JSON array
	// conversation: the request names a conversation of OpenAI's
	// Conversations API, which the gateway never makes.
	conversation bool

	prevID string
	prev   *store.Response // the response previous_response_id names, if the key's
	// withheld: the id is stored, but not for the key (another's, or
	// expired or deleted): answered as unknown, never forwarded.
	withheld    bool
	unavailable bool // previous_response_id, and no store to find it in
	// The request with the previous conversation in place of the id.
	expanded     []byte
	expandedScan dialect.Scanned

	// Of the last attempt: the target that answers, if it does.
	target         string
	upstreamStored bool // a Responses upstream kept the response too
	affinity       affinity.Key
	tap            *storingTap // the stream's, until it ends
	// conversation's first stored response: the session of a request
	// that names none (Session).
	first string
}

var _ dialect.SessionTurn = (*turn)(nil)

// Begin reads store, conversation and previous_response_id, and finds
// the previous response; a request that continues one is expanded into
// the conversation, which the limits and routing read. A count of input
// tokens and a compaction name one too, under the same rules (the
// upstream's account is every key's), and keep nothing: a compaction's
// answer is a compacted window the client sends back as input, not a
// response to continue.
func (h *Hook) Begin(ctx context.Context, r *dialect.TurnRequest) (dialect.Turn, error) {
	if r.Op != dialect.Generate && r.Op != dialect.CountTokens && r.Op != dialect.Compact {
		return nil, nil
	}
	body := r.Body
	st := &turn{h: h, ctx: ctx, req: *r}
	st.store = h.store != nil && r.Op == dialect.Generate && gjson.GetBytes(body, "store").Type != gjson.False
	st.input = inputItems(gjson.GetBytes(body, "input"))
	conv := gjson.GetBytes(body, "conversation")
	st.conversation = conv.Exists() && conv.Type != gjson.Null
	st.prevID = gjson.GetBytes(body, "previous_response_id").Str
	if st.prevID == "" {
		if !st.store && !st.conversation {
			return nil, nil
		}
		return st, nil
	}
	if h.store == nil {
		st.unavailable = true
		return st, nil
	}
	chain, err := h.store.ResponseChain(ctx, st.prevID, r.Owner, clock.Now())
	if store.IsNotFound(err) {
		// A provider that forwards unknown ids may know it, unless it is
		// stored for another key.
		st.withheld, err = h.store.ResponseKnown(ctx, st.prevID)
		if err == nil {
			return st, nil
		}
	}
	switch {
	case errors.Is(err, store.ErrChainTooLong) || err == nil && len(chain) >= store.MaxResponseChain:
		return nil, &dialect.Refusal{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "previous_response_id",
			Message: fmt.Sprintf("previous_response_id: the conversation has %d stored responses, the most it may have; start a new one with its items as input", store.MaxResponseChain)}
	case err != nil:
		return nil, &dialect.Refusal{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Param: "previous_response_id",
			Message: "stored responses cannot be read now", Err: err}
	}
	st.prev, st.first = &chain[len(chain)-1], chain[0].ID
	// The conversation: what led to the previous response, its output, then
	// the new input.
	items := conversation(chain, output(*st.prev), st.input)
	var m map[string]jsontext.Value
	if err := jsonx.Unmarshal(body, &m); err != nil {
		path, msg := jsonx.Explain(err)
		return nil, &dialect.Refusal{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: path, Message: msg, Err: err}
	}
	delete(m, "previous_response_id")
	m["input"] = items
	expanded, err := jsonx.Marshal(m)
	if err != nil {
		return nil, err
	}
	s, err := dialect.Scan(expanded, &dialect.Responses.Fields)
	if err != nil {
		return nil, err
	}
	st.expanded, st.expandedScan = expanded, s
	r.Body, r.Scan = expanded, s
	return st, nil
}

// Attempt picks the body an attempt on target t sends: the client's, with
// the id, for the target that stored the response (or may know an id the
// gateway never stored); the expanded conversation for any other. A
// conversation of OpenAI's Conversations API is the upstream account's,
// every key's: the gateway makes none, so it goes only to a provider that
// forwards ids the gateway never stored.
func (st *turn) Attempt(t dialect.AttemptTarget) (dialect.AttemptBody, error) {
	st.target, st.affinity = t.Name, t.Affinity
	a := dialect.AttemptBody{Body: st.req.Body, Scan: st.req.Scan}
	if st.conversation && !(t.Passthrough && t.ForwardUnknownIDs) {
		return a, &dialect.Refusal{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "conversation",
			Message: fmt.Sprintf("conversation: this gateway keeps no conversations, and sends no conversation id to model %q's upstream; send the conversation's items as input, or continue a stored response with previous_response_id", dialect.Clip(st.req.Model))}
	}
	switch {
	case st.prevID == "":
	case st.prev != nil && !(t.Passthrough && st.prev.UpstreamStored && st.prev.Target == t.Name):
		a = dialect.AttemptBody{Body: st.expanded, Scan: st.expandedScan, Continues: st.prevID}
	case st.prev != nil:
		// The target stored it.
	case t.Passthrough && t.ForwardUnknownIDs && !st.withheld:
		// The gateway never stored it; the target may know it (made
		// without the gateway).
	case st.unavailable:
		return a, &dialect.Refusal{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "previous_response_id",
			Message: "previous_response_id: this gateway stores no responses (it runs without a database); send the conversation as input items"}
	default:
		return a, &dialect.Refusal{Status: http.StatusNotFound, Kind: dialect.NotFound, Param: "previous_response_id", Code: "previous_response_not_found",
			Message: fmt.Sprintf("previous response with id %q not found", dialect.Clip(st.prevID))}
	}
	// On the pass-through lane a Responses upstream keeps the response too,
	// unless the request said not to.
	st.upstreamStored = t.Passthrough && gjson.GetBytes(a.Body, "store").Type != gjson.False
	return a, nil
}

// Affinity is the key the previous response was stored with: the key of
// the conversation's first request, which its owner's tenant scoped.
func (st *turn) Affinity() affinity.Key {
	if st.prev == nil {
		return 0
	}
	return affinity.Key(st.prev.Affinity)
}

// Keeps: the response is stored, or names the response it continues (a
// count or a compaction answers no response object).
func (st *turn) Keeps() bool { return st.store || st.prevID != "" && st.req.Op == dialect.Generate }

// Answer stores a whole answer (the client continuing at once finds it),
// naming the response it continues.
func (st *turn) Answer(body []byte, events bool) []byte {
	if events {
		body = echoEvents(body, st.prevID)
		st.keep(terminalResponse(body))
		return body
	}
	body = echo(body, st.prevID)
	st.keep(body)
	return body
}

// Stream wraps a stream's tap to keep its response and name the response
// it continues in every response object.
func (st *turn) Stream(tap dialect.Tap) dialect.Tap {
	st.tap = &storingTap{Tap: tap, prevID: st.prevID}
	if st.store {
		st.tap.keep = st.keep
	}
	return st.tap
}

// Ended keeps the response a pass-through stream began when the stream
// ended without its terminal event (the upstream failed, or the client
// left): the upstream stored it as it began, so it is recorded as the
// key's, and no other key's request may name it. A translated stream's
// upstream stored nothing, and a response it never finished is not kept.
func (st *turn) Ended() {
	t := st.tap
	st.tap = nil
	if t != nil && t.keep != nil && !t.done && t.started != nil && st.upstreamStored {
		t.done = true
		st.keep(t.started)
	}
}

// keep stores the response a client is about to get (response is its
// JSON object). It runs before the answer's last bytes are written, so a
// client that continues at once finds it.
func (st *turn) keep(response []byte) {
	if !st.store {
		return
	}
	id := gjson.GetBytes(response, "id").Str
	if id == "" {
		return
	}
	h, now := st.h, clock.Now()
	rec := store.Response{ID: id, Owner: st.req.Owner, Model: st.req.Model, Input: st.input, Response: bytes.Clone(response),
		CreatedAt: now, ExpiresAt: now.Add(h.retention), Affinity: int64(st.affinity),
		Target: st.target, UpstreamStored: st.upstreamStored}
	if st.prev != nil {
		rec.Prev = st.prev.ID
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(st.ctx), 5*time.Second)
	defer cancel()
	if err := h.store.PutResponse(ctx, rec); err != nil {
		h.log.Warn("storing a response failed", "request_id", st.req.RequestID, "response_id", id, "error", err)
		return
	}
	if st.first == "" {
		st.first = id // the request starts a conversation
	}
	h.purge(now)
}

// Session is the session the client named, else the stored
// conversation's: the id of its first response, which every response
// that continues it reaches (the chain walk keeps a conversation's start
// for as long as one of its responses is kept).
func (st *turn) Session(named string) string {
	if named != "" {
		return dialect.SessionID(named)
	}
	return dialect.SessionID(st.first)
}

// purgeEvery is how often expired responses are deleted, at most.
const purgeEvery = time.Hour

// purge deletes expired responses in the background, at most once per
// purgeEvery.
func (h *Hook) purge(now time.Time) {
	last := h.lastPurge.Load()
	if now.UnixNano()-last < int64(purgeEvery) || !h.lastPurge.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if n, err := h.store.PurgeResponses(ctx, now); err != nil {
			h.log.Warn("deleting expired responses failed", "error", err)
		} else if n > 0 {
			h.log.Info("deleted expired responses", "count", n)
		}
	}()
}
