package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/internal/api"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
)

// messages serves POST /v1/messages.
func (g *Gateway) messages(w http.ResponseWriter, r *http.Request, x *exchange) error {
	body, s, m, err := g.readRequest(w, r, x, true)
	if err != nil {
		return err
	}
	if !s.maxTokens {
		return &Error{Status: http.StatusBadRequest, Kind: kindInvalidRequest, Param: "max_tokens", Message: "max_tokens: field required"}
	}
	if err := g.admit(w, r, x, m, body, s); err != nil {
		return err
	}
	return g.forward(w, r, x, m, body, s, provider.Messages)
}

// countTokens serves POST /v1/messages/count_tokens.
func (g *Gateway) countTokens(w http.ResponseWriter, r *http.Request, x *exchange) error {
	body, s, m, err := g.readRequest(w, r, x, true)
	if err != nil {
		return err
	}
	s.stream = false
	// Counting is free upstream and local counts take a core, so neither
	// tokens nor budgets apply; the rate and the parallel limits do.
	if err := g.admitCount(w, r, x, m, body, s); err != nil {
		return err
	}
	return g.forward(w, r, x, m, body, s, provider.CountTokens)
}

// chatCompletions serves POST /v1/chat/completions.
func (g *Gateway) chatCompletions(w http.ResponseWriter, r *http.Request, x *exchange) error {
	body, s, m, err := g.readRequest(w, r, x, false)
	if err != nil {
		return err
	}
	if err := g.admit(w, r, x, m, body, s); err != nil {
		return err
	}
	return g.forward(w, r, x, m, body, s, provider.ChatCompletions)
}

// readRequest does the checks every model endpoint shares: the
// anthropic-version header (Anthropic dialect), the body size, its JSON,
// the model and the messages array.
func (g *Gateway) readRequest(w http.ResponseWriter, r *http.Request, x *exchange, needVersion bool) ([]byte, scanned, *route.Model, error) {
	if needVersion && r.Header.Get("Anthropic-Version") == "" {
		return nil, scanned{}, nil, newError(http.StatusBadRequest, kindInvalidRequest, "anthropic-version: header is required")
	}
	body, err := g.readBody(w, r, x)
	if err != nil {
		return nil, scanned{}, nil, err
	}
	s, err := scanBody(body)
	if err != nil {
		var se *scanError
		if errors.As(err, &se) {
			return nil, s, nil, &Error{Status: http.StatusBadRequest, Kind: kindInvalidRequest, Param: se.param, Message: se.msg}
		}
		return nil, s, nil, err
	}
	if !s.hasModel || len(s.model) == 0 {
		return nil, s, nil, &Error{Status: http.StatusBadRequest, Kind: kindInvalidRequest, Param: "model", Message: "model: field required"}
	}
	x.model = clip(string(s.model))
	x.stream = s.stream
	switch s.messages {
	case -1:
		return nil, s, nil, &Error{Status: http.StatusBadRequest, Kind: kindInvalidRequest, Param: "messages", Message: "messages: field required"}
	case 0:
		return nil, s, nil, &Error{Status: http.StatusBadRequest, Kind: kindInvalidRequest, Param: "messages", Message: "messages: at least one message is required"}
	}
	x.reqBody = body
	m := g.routes.Lookup(s.model)
	if m != nil {
		x.routed = m.Name
	}
	if m == nil {
		return nil, s, nil, unknownModel(x.model, nil)
	}
	if err := x.allow(m); err != nil {
		return nil, s, nil, err
	}
	return body, s, m, nil
}

// allow checks that the request's key may use model m. A model the key
// may not use is answered exactly as one that does not exist, so a key
// cannot learn which other models the gateway serves; the log says why.
func (x *exchange) allow(m *route.Model) error {
	if x.mayUse(m) {
		return nil
	}
	x.routed = "" // as for an unknown name: no model label, no model limits
	return unknownModel(x.model, errors.New("the key may not use this model"))
}

func (x *exchange) mayUse(m *route.Model) bool {
	return x.key == nil || x.key.AllowsModel(m.Name, m.Aliases)
}

// unknownModel is the answer for a model name that does not exist (or that
// the key may not use: why is the cause, for the log only).
func unknownModel(name string, why error) *Error {
	return &Error{Status: http.StatusNotFound, Kind: kindNotFound, Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("model %q does not exist; GET /v1/models lists the models this gateway serves", name), Err: why}
}

// readBody reads the whole request body, at most maxBody bytes, into a
// pooled buffer that the exchange releases when the request is done.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request, x *exchange) ([]byte, error) {
	tooLarge := &Error{Status: http.StatusRequestEntityTooLarge, Kind: kindTooLarge,
		Message: "request body is larger than the gateway's limit of " + strconv.FormatInt(g.maxBody, 10) + " bytes"}
	if r.ContentLength > g.maxBody {
		return nil, tooLarge
	}
	x.bodyRead = true
	rd := http.MaxBytesReader(w, r.Body, g.maxBody)
	var body []byte
	var err error
	if r.ContentLength > 0 {
		if !g.buffered.take(x, r.ContentLength) {
			return nil, errBuffersFull
		}
		bb := newBodyBuf(int(r.ContentLength))
		x.body = bb
		body = bb.b
		_, err = io.ReadFull(rd, body)
	} else {
		body, err = g.buffered.readAll(x, rd, g.maxBody)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		if err == errBuffersFull {
			return nil, err
		}
		return nil, &Error{Status: http.StatusBadRequest, Kind: kindInvalidRequest, Message: "reading request body failed", Err: err}
	}
	if len(body) == 0 {
		return nil, newError(http.StatusBadRequest, kindInvalidRequest, "request body is empty; expected a JSON object")
	}
	return body, nil
}

// listModels serves GET /v1/models: OpenAI's list shape, or Anthropic's
// when the client sends anthropic-version. Aliases are listed as models.
func (g *Gateway) listModels(w http.ResponseWriter, r *http.Request, x *exchange) error {
	var ids []string
	for _, m := range g.routes.Models() {
		if !x.mayUse(m) {
			continue // a key sees only the models it may use
		}
		ids = append(ids, m.Name)
		ids = append(ids, m.Aliases...)
	}
	var out any
	if x.dialect == api.Anthropic {
		data := make([]any, 0, len(ids))
		for _, id := range ids {
			data = append(data, g.anthropicModel(id))
		}
		page := map[string]any{"data": data, "has_more": false, "first_id": nil, "last_id": nil}
		if len(ids) > 0 {
			page["first_id"], page["last_id"] = ids[0], ids[len(ids)-1]
		}
		out = page
	} else {
		data := make([]any, 0, len(ids))
		for _, id := range ids {
			data = append(data, g.openAIModel(id))
		}
		out = map[string]any{"object": "list", "data": data}
	}
	return writeJSON(w, x, out)
}

// getModel serves GET /v1/models/{id}.
func (g *Gateway) getModel(w http.ResponseWriter, r *http.Request, x *exchange) error {
	id := r.PathValue("id")
	m := g.routes.Lookup([]byte(id))
	if m == nil {
		return unknownModel(clip(id), nil)
	}
	if err := x.allow(m); err != nil {
		return err
	}
	if x.dialect == api.Anthropic {
		return writeJSON(w, x, g.anthropicModel(id))
	}
	return writeJSON(w, x, g.openAIModel(id))
}

func (g *Gateway) anthropicModel(id string) map[string]any {
	return map[string]any{"type": "model", "id": id, "display_name": id, "created_at": g.started.UTC().Format(time.RFC3339)}
}

func (g *Gateway) openAIModel(id string) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": g.started.Unix(), "owned_by": "tollgate"}
}

func writeJSON(w http.ResponseWriter, x *exchange, v any) error {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	x.status = http.StatusOK
	x.firstByte = time.Since(x.start)
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(b)
	return err
}
