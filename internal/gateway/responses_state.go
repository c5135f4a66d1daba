package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/sse"
	"github.com/tollgate/tollgate/internal/store"
)

// Stored responses of the Responses API. A response is kept (store
// defaults to true, as OpenAI's API has it) with the input items its
// request added and a link to the response it continued, owned by the key
// that made it. previous_response_id continues it on any lane: a
// Responses upstream that stored the response itself gets the id when the
// request goes to the same target; every other target gets the
// conversation, read back along the links, expanded into input items.
//
// Every key shares an upstream's account, so an id is forwarded only for
// the key the gateway stored it for. Another key's id is not found, the
// same answer as an unknown id; an id the gateway never stored goes only
// to a provider with forward_unknown_response_ids.

// ResponseStore keeps responses for Responses API clients.
type ResponseStore interface {
	PutResponse(ctx context.Context, r store.Response) error
	ResponseByID(ctx context.Context, id, owner string, now time.Time) (store.Response, error)
	ResponseChain(ctx context.Context, id, owner string, now time.Time) ([]store.Response, error)
	ResponseKnown(ctx context.Context, id string) (bool, error)
	DeleteResponse(ctx context.Context, id, owner string) error
	PurgeResponses(ctx context.Context, now time.Time) (int64, error)
}

// responsesState is what a Responses request's stored state needs.
type responsesState struct {
	store bool   // keep the response (store is not false, and there is a store)
	input []byte // the input items the request adds, as a JSON array

	prevID string
	prev   *store.Response // the response previous_response_id names, if the key's
	// withheld: the id is stored, but not for the key (another's, or
	// expired or deleted): answered as unknown, never forwarded.
	withheld    bool
	unavailable bool // previous_response_id, and no store to find it in
	// The request with the previous conversation in place of the id.
	expanded     []byte
	expandedScan dialect.Scanned
	origBody     []byte
	origScan     dialect.Scanned
}

// owner is who owns the responses of the request's key ("" for the master key).
func (x *exchange) owner() string {
	if x.key == nil {
		return ""
	}
	return x.key.ID
}

// prepareResponsesState reads store and previous_response_id, and finds
// the previous response. A count of input tokens names one too, and keeps
// nothing.
func (g *Gateway) prepareResponsesState(c *call) error {
	body := c.body
	st := &responsesState{origBody: body, origScan: c.s}
	st.store = g.responses != nil && c.op == dialect.Generate && gjson.GetBytes(body, "store").Type != gjson.False
	input := inputItems(gjson.GetBytes(body, "input"))
	st.input = input
	c.state = st
	st.prevID = gjson.GetBytes(body, "previous_response_id").Str
	if st.prevID == "" {
		return nil
	}
	if g.responses == nil {
		st.unavailable = true
		return nil
	}
	ctx := c.r.Context()
	chain, err := g.responses.ResponseChain(ctx, st.prevID, c.x.owner(), clock.Now())
	if store.IsNotFound(err) {
		// A provider that forwards unknown ids may know it, unless it is
		// stored for another key.
		st.withheld, err = g.responses.ResponseKnown(ctx, st.prevID)
		if err == nil {
			return nil
		}
	}
	switch {
	case errors.Is(err, store.ErrChainTooLong) || err == nil && len(chain) >= store.MaxResponseChain:
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "previous_response_id",
			Message: fmt.Sprintf("previous_response_id: the conversation has %d stored responses, the most it may have; start a new one with its items as input", store.MaxResponseChain)}
	case err != nil:
		return &Error{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Param: "previous_response_id",
			Message: "stored responses cannot be read now", Err: err}
	}
	st.prev = &chain[len(chain)-1]
	// The conversation: what led to the previous response, its output, then
	// the new input.
	conv := conversation(chain, output(*st.prev), input)
	var m map[string]jsontext.Value
	if err := jsonx.Unmarshal(body, &m); err != nil {
		path, msg := jsonx.Explain(err)
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: path, Message: msg, Err: err}
	}
	delete(m, "previous_response_id")
	m["input"] = conv
	expanded, err := jsonx.Marshal(m)
	if err != nil {
		return err
	}
	s, err := dialect.Scan(expanded, &c.x.dialect.Fields)
	if err != nil {
		return err
	}
	st.expanded, st.expandedScan = expanded, s
	return nil
}

// inputItems is a request's input as an array of items: a string is one
// user message.
func inputItems(in gjson.Result) []byte {
	switch {
	case in.Type == gjson.String:
		return append(append([]byte{'['}, dialect.UserInputItem([]byte(in.Raw))...), ']')
	case in.IsArray():
		return []byte(in.Raw)
	}
	return []byte("[]")
}

// conversation is the input items that led to the last response of
// chain (the inputs and outputs of those before it, then its input),
// followed by the arrays in more.
func conversation(chain []store.Response, more ...[]byte) []byte {
	parts := make([][]byte, 0, 2*len(chain)+len(more))
	for i, r := range chain {
		parts = append(parts, r.Input)
		if i < len(chain)-1 {
			parts = append(parts, output(r))
		}
	}
	return joinArrays(append(parts, more...)...)
}

// output is a stored response's output items.
func output(r store.Response) []byte { return []byte(gjson.GetBytes(r.Response, "output").Raw) }

// joinArrays concatenates JSON arrays.
func joinArrays(arrays ...[]byte) []byte {
	out := []byte{'['}
	for _, a := range arrays {
		a = bytes.TrimSpace(a)
		if len(a) < 2 || a[0] != '[' {
			continue
		}
		inner := bytes.TrimSpace(a[1 : len(a)-1])
		if len(inner) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, inner...)
	}
	return append(out, ']')
}

// stateBody picks the body an attempt on target t sends. passthrough says
// t speaks the Responses API.
func (st *responsesState) stateBody(c *call, t *route.Target, passthrough bool) error {
	c.body, c.s = st.origBody, st.origScan
	switch {
	case st.prevID == "":
	case st.prev != nil && !(passthrough && st.prev.UpstreamStored && st.prev.Target == t.Name):
		c.body, c.s = st.expanded, st.expandedScan
	case st.prev != nil:
		// The target stored it.
	case passthrough && t.ForwardUnknownResponseIDs && !st.withheld:
		// The gateway never stored it; the target may know it (made
		// without the gateway).
	case st.unavailable:
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "previous_response_id",
			Message: "previous_response_id: this gateway stores no responses (it runs without a database); send the conversation as input items"}
	default:
		return &Error{Status: http.StatusNotFound, Kind: dialect.NotFound, Param: "previous_response_id", Code: "previous_response_not_found",
			Message: fmt.Sprintf("previous response with id %q not found", st.prevID)}
	}
	return nil
}

// keepResponse stores the response a client is about to get (response is
// its JSON object). It runs before the answer's last bytes are written, so
// a client that continues at once finds it.
func (g *Gateway) keepResponse(c *call, response []byte) {
	if !c.keepsAnswer() {
		return
	}
	st := c.state
	id := gjson.GetBytes(response, "id").Str
	if id == "" {
		return
	}
	x := c.x
	now := clock.Now()
	rec := store.Response{ID: id, Owner: x.owner(), Model: x.routed, Input: st.input, Response: bytes.Clone(response),
		CreatedAt: now, ExpiresAt: now.Add(g.retention), Affinity: int64(c.key)}
	if st.prev != nil {
		rec.Prev = st.prev.ID
	}
	if t := x.target; t != nil {
		rec.Target = t.Name
		// On the pass-through lane a Responses upstream kept it too, unless
		// the request said not to.
		rec.UpstreamStored = x.lane == "passthrough" && gjson.GetBytes(c.body, "store").Type != gjson.False
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.r.Context()), 5*time.Second)
	defer cancel()
	if err := g.responses.PutResponse(ctx, rec); err != nil {
		g.log.Warn("storing a response failed", "request_id", x.id, "response_id", id, "error", err)
		return
	}
	g.purgeResponses(now)
}

// purgeEvery is how often expired responses are deleted, at most.
const purgeEvery = time.Hour

// purgeResponses deletes expired responses in the background, at most
// once per purgeEvery.
func (g *Gateway) purgeResponses(now time.Time) {
	last := g.lastPurge.Load()
	if now.UnixNano()-last < int64(purgeEvery) || !g.lastPurge.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if n, err := g.responses.PurgeResponses(ctx, now); err != nil {
			g.log.Warn("deleting expired responses failed", "error", err)
		} else if n > 0 {
			g.log.Info("deleted expired responses", "count", n)
		}
	}()
}

// terminalResponse is the response object of the Responses terminal event
// in events (client-bound SSE bytes), if there is one.
func terminalResponse(events []byte) []byte {
	r, final := streamResponse(events)
	if !final {
		return nil
	}
	return r
}

// streamResponse is the response object of the last Responses lifecycle
// event in events (created, in progress, … or a terminal one), and
// whether that event is terminal.
func streamResponse(events []byte) (r []byte, final bool) {
	if !bytes.Contains(events, []byte(`"response.`)) {
		return nil, false
	}
	var f sse.Fields
	for len(events) > 0 {
		n := sse.Split(events)
		if n == 0 {
			break
		}
		f.Parse(events[:n])
		events = events[n:]
		switch gjson.GetBytes(f.Data, "type").Str {
		case "response.completed", "response.incomplete", "response.failed":
			return []byte(gjson.GetBytes(f.Data, "response").Raw), true
		case "response.created", "response.queued", "response.in_progress":
			r = []byte(gjson.GetBytes(f.Data, "response").Raw)
		}
	}
	return r, false
}

// storingTap keeps the response of a Responses stream when its terminal
// event goes by, before the relay writes it. It remembers the response
// the stream began, for a stream that ends without one (keepUnfinished).
type storingTap struct {
	dialect.Tap
	keep    func([]byte)
	done    bool
	started []byte // the response of the last lifecycle event, until the terminal one
}

func (t *storingTap) Feed(ev []byte) []byte {
	out := t.Tap.Feed(ev)
	t.check(out)
	return out
}

func (t *storingTap) Close(eof bool, msg string) ([]byte, bool) {
	out, ok := t.Tap.Close(eof, msg)
	t.check(out)
	return out, ok
}

func (t *storingTap) check(out []byte) {
	if t.done || len(out) == 0 {
		return
	}
	switch r, final := streamResponse(out); {
	case final:
		t.done, t.started = true, nil
		t.keep(r)
	case r != nil:
		t.started = bytes.Clone(r)
	}
}

// keepUnfinished keeps the response a pass-through stream began when the
// stream ended without its terminal event (the upstream failed, or the
// client left): the upstream stored it as it began, so it is recorded
// as the key's, and no other key's request may name it.
func (g *Gateway) keepUnfinished(c *call, tap dialect.Tap) {
	if t, ok := tap.(*storingTap); ok && !t.done && t.started != nil {
		t.done = true
		g.keepResponse(c, t.started)
	}
}

// storing wraps a Responses stream's tap to keep its response.
func (g *Gateway) storing(c *call, tap dialect.Tap) dialect.Tap {
	if !c.keepsAnswer() {
		return tap
	}
	return &storingTap{Tap: tap, keep: func(r []byte) { g.keepResponse(c, r) }}
}

// keepsAnswer reports whether the answer is stored for a later
// previous_response_id (a Responses request with store on).
func (c *call) keepsAnswer() bool { return c.state != nil && c.state.store }

// The stored-response endpoints: GET and DELETE /v1/responses/{id}, and
// GET /v1/responses/{id}/input_items.

func (g *Gateway) storedResponse(w http.ResponseWriter, r *http.Request, x *exchange) error {
	chain, err := g.findResponse(r, x, false)
	if err != nil {
		return err
	}
	rec := chain[0]
	switch r.Method {
	case http.MethodGet:
		return g.writeBody(w, x, http.StatusOK, rec.Response)
	case http.MethodDelete:
		if err := g.responses.DeleteResponse(r.Context(), rec.ID, x.owner()); err != nil && !store.IsNotFound(err) {
			return &Error{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Message: "stored responses cannot be changed now", Err: err}
		}
		return g.writeBody(w, x, http.StatusOK, fmt.Appendf(nil, `{"id":%s,"object":"response","deleted":true}`, jsonx.AppendQuote(nil, rec.ID)))
	}
	e := newError(http.StatusMethodNotAllowed, dialect.MethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path+"; use GET or DELETE")
	e.Header = http.Header{"Allow": {"GET, DELETE"}}
	return e
}

// findResponse finds the key's response the path names: with the
// responses before it (the chain, oldest first) when conversation is set,
// else alone.
func (g *Gateway) findResponse(r *http.Request, x *exchange, conversation bool) ([]store.Response, error) {
	id := r.PathValue("id")
	notFound := &Error{Status: http.StatusNotFound, Kind: dialect.NotFound, Message: fmt.Sprintf("response with id %q not found", dialect.Clip(id))}
	if g.responses == nil {
		notFound.Message += " (this gateway stores no responses: it runs without a database)"
		return nil, notFound
	}
	var chain []store.Response
	var err error
	if conversation {
		chain, err = g.responses.ResponseChain(r.Context(), id, x.owner(), clock.Now())
	} else {
		var rec store.Response
		rec, err = g.responses.ResponseByID(r.Context(), id, x.owner(), clock.Now())
		chain = []store.Response{rec}
	}
	switch {
	case store.IsNotFound(err):
		return nil, notFound
	case err != nil:
		return nil, &Error{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Message: "stored responses cannot be read now", Err: err}
	}
	return chain, nil
}

// inputItemList serves GET /v1/responses/{id}/input_items: the items of
// the conversation that led to the response, with OpenAI's list paging
// (limit 1–100, default 20; order desc, the default, or asc; after an id).
func (g *Gateway) inputItemList(w http.ResponseWriter, r *http.Request, x *exchange) error {
	if r.Method != http.MethodGet {
		e := newError(http.StatusMethodNotAllowed, dialect.MethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path+"; use GET")
		e.Header = http.Header{"Allow": {"GET"}}
		return e
	}
	chain, err := g.findResponse(r, x, true)
	if err != nil {
		return err
	}
	rec := chain[len(chain)-1]
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "limit", Message: "limit: must be an integer from 1 to 100"}
		}
		limit = n
	}
	order := q.Get("order")
	if order == "" {
		order = "desc"
	}
	if order != "asc" && order != "desc" {
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "order", Message: "order: must be asc or desc"}
	}
	items := gjson.ParseBytes(conversation(chain)).Array()
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.Get("id").Str
		if ids[i] == "" { // items sent without an id get a stable one
			ids[i] = fmt.Sprintf("item_%s_%d", rec.ID, i)
		}
	}
	order_ := make([]int, len(items))
	for i := range order_ {
		order_[i] = i
		if order == "desc" {
			order_[i] = len(items) - 1 - i
		}
	}
	start := 0
	if after := q.Get("after"); after != "" {
		start = -1
		for k, i := range order_ {
			if ids[i] == after {
				start = k + 1
			}
		}
		if start < 0 {
			return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "after", Message: fmt.Sprintf("after: no item with id %q", dialect.Clip(after))}
		}
	}
	end := min(start+limit, len(order_))
	var b bytes.Buffer
	b.WriteString(`{"object":"list","data":[`)
	for k := start; k < end; k++ {
		if k > start {
			b.WriteByte(',')
		}
		b.Write(withID(items[order_[k]], ids[order_[k]]))
	}
	b.WriteString(`],"first_id":`)
	first, last := "", ""
	if end > start {
		first, last = ids[order_[start]], ids[order_[end-1]]
	}
	b.Write(nullOrQuote(first))
	b.WriteString(`,"last_id":`)
	b.Write(nullOrQuote(last))
	b.WriteString(`,"has_more":` + strconv.FormatBool(end < len(order_)) + `}`)
	return g.writeBody(w, x, http.StatusOK, b.Bytes())
}

// withID is an input item as OpenAI lists it: with its id, and a message
// with its type and its content as parts (a string is one text part).
func withID(it gjson.Result, id string) []byte {
	content := it.Get("content")
	isMessage := it.Get("role").Exists() && (!it.Get("type").Exists() || it.Get("type").Str == "message")
	if it.Get("id").Exists() && it.Get("type").Exists() && !(isMessage && content.Type == gjson.String) {
		return []byte(it.Raw)
	}
	var m map[string]jsontext.Value
	if jsonx.Unmarshal([]byte(it.Raw), &m) != nil {
		return []byte(it.Raw)
	}
	if !it.Get("id").Exists() {
		m["id"] = jsontext.Value(jsonx.AppendQuote(nil, id))
	}
	if isMessage {
		m["type"] = jsontext.Value(`"message"`)
		if content.Type == gjson.String {
			part := "input_text"
			if it.Get("role").Str == "assistant" {
				part = "output_text"
			}
			m["content"] = mustJSONValue([]map[string]string{{"type": part, "text": content.Str}})
		}
	}
	b, _ := jsonx.Marshal(m)
	return b
}

func mustJSONValue(v any) jsontext.Value {
	b, _ := jsonx.Marshal(v)
	return b
}

func nullOrQuote(s string) []byte {
	if s == "" {
		return []byte("null")
	}
	return jsonx.AppendQuote(nil, s)
}
