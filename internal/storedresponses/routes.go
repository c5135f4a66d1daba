package storedresponses

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/store"
)

// The stored-response endpoints: GET and DELETE /v1/responses/{id}, and
// GET /v1/responses/{id}/input_items.

func (h *Hook) storedResponse(r *http.Request, owner string) (int, []byte, error) {
	chain, err := h.findResponse(r, owner, false)
	if err != nil {
		return 0, nil, err
	}
	rec := chain[0]
	switch r.Method {
	case http.MethodGet:
		return http.StatusOK, rec.Response, nil
	case http.MethodDelete:
		if err := h.store.DeleteResponse(r.Context(), rec.ID, owner); err != nil && !store.IsNotFound(err) {
			return 0, nil, &dialect.Refusal{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Message: "stored responses cannot be changed now", Err: err}
		}
		return http.StatusOK, fmt.Appendf(nil, `{"id":%s,"object":"response","deleted":true}`, jsonx.AppendQuote(nil, rec.ID)), nil
	}
	return 0, nil, methodNotAllowed(r, "GET, DELETE")
}

// methodNotAllowed refuses a method a route does not serve.
func methodNotAllowed(r *http.Request, allow string) error {
	return &dialect.Refusal{Status: http.StatusMethodNotAllowed, Kind: dialect.MethodNotAllowed, Header: http.Header{"Allow": {allow}},
		Message: "method " + r.Method + " is not allowed on " + dialect.Clip(r.URL.Path) + "; use " + strings.ReplaceAll(allow, ", ", " or ")}
}

// findResponse finds the key's response the path names: with the
// responses before it (the chain, oldest first) when conversation is set,
// else alone.
func (h *Hook) findResponse(r *http.Request, owner string, conversation bool) ([]store.Response, error) {
	id := r.PathValue("id")
	notFound := &dialect.Refusal{Status: http.StatusNotFound, Kind: dialect.NotFound, Message: fmt.Sprintf("response with id %q not found", dialect.Clip(id))}
	if h.store == nil {
		notFound.Message += " (this gateway stores no responses: it runs without a database)"
		return nil, notFound
	}
	var chain []store.Response
	var err error
	if conversation {
		chain, err = h.store.ResponseChain(r.Context(), id, owner, clock.Now())
	} else {
		var rec store.Response
		rec, err = h.store.ResponseByID(r.Context(), id, owner, clock.Now())
		chain = []store.Response{rec}
	}
	switch {
	case store.IsNotFound(err):
		return nil, notFound
	case err != nil:
		return nil, &dialect.Refusal{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Message: "stored responses cannot be read now", Err: err}
	}
	return chain, nil
}

// inputItemList serves GET /v1/responses/{id}/input_items: the items of
// the conversation that led to the response, with OpenAI's list paging
// (limit 1–100, default 20; order desc, the default, or asc; after an id).
func (h *Hook) inputItemList(r *http.Request, owner string) (int, []byte, error) {
	if r.Method != http.MethodGet {
		return 0, nil, methodNotAllowed(r, "GET")
	}
	chain, err := h.findResponse(r, owner, true)
	if err != nil {
		return 0, nil, err
	}
	rec := chain[len(chain)-1]
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return 0, nil, &dialect.Refusal{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "limit", Message: "limit: must be an integer from 1 to 100"}
		}
		limit = n
	}
	order := q.Get("order")
	if order == "" {
		order = "desc"
	}
	if order != "asc" && order != "desc" {
		return 0, nil, &dialect.Refusal{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "order", Message: "order: must be asc or desc"}
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
			return 0, nil, &dialect.Refusal{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "after", Message: fmt.Sprintf("after: no item with id %q", dialect.Clip(after))}
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
	return http.StatusOK, b.Bytes(), nil
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
