package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/embeddings"
	"github.com/tollgate/tollgate/internal/formdata"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/route"
)

// call is one client request on its way to the model's targets: what
// every attempt shares. It lives on the handler's stack.
type call struct {
	w    http.ResponseWriter
	r    *http.Request
	x    *exchange
	m    *route.Model
	body []byte
	s    dialect.Scanned
	op   dialect.Op
	pick route.Picker // the choice of targets
	key  affinity.Key // the request's conversation, for sticky routing and cache hints
	// namedKey: the client named the conversation's cache key
	// (prompt_cache_key), which is sent upstream as key's.
	namedKey bool
	// turn is the request's passage through its dialect's hook, if it
	// has one (lifecycle.go).
	turn dialect.Turn
	// continues: the attempt's body holds the conversation of the stored
	// answer so named, in place of the reference to it.
	continues string
	// addr is what the path of a URL-addressed request said; nil for others.
	addr *dialect.Address
	// fields, when set, are the endpoint's own (Endpoint.Fields).
	fields *dialect.Fields
	// embed is an embeddings request, read (embed.go); embedSpent the
	// input tokens of the batches earlier attempts had made before they
	// failed (the upstream billed them).
	embed      *embeddings.Request
	embedSpent int64
	// ep is the endpoint called; nil for a URL-addressed request.
	ep *dialect.Endpoint
	// form is a multipart request's body, read up to its model (forms.go);
	// body is nil then.
	form *formdata.Form
}

// modelEndpoint serves an endpoint that names a model: it reads and checks
// the request, admits it against the limits, and forwards it.
func (g *Gateway) modelEndpoint(ep dialect.Endpoint) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, x *exchange) error {
		return g.serveModel(w, r, x, ep, nil)
	}
}

// serveModel serves one request to endpoint ep; addr is what the path of
// a URL-addressed request said (nil for others).
func (g *Gateway) serveModel(w http.ResponseWriter, r *http.Request, x *exchange, ep dialect.Endpoint, addr *dialect.Address) error {
	c := call{addr: addr, fields: ep.Fields}
	if err := g.readRequest(&c, w, r, x); err != nil {
		return err
	}
	c.op = ep.Op
	d := x.dialect
	if addr == nil {
		c.ep = &ep
	}
	switch {
	case ep.Op == dialect.Embed:
		if err := g.readEmbed(&c); err != nil {
			return err
		}
	case ep.Op.PassThroughOnly():
		if err := g.checkPassTargets(&c, ep.Path); err != nil {
			return err
		}
	}
	if ep.RequireMaxOutput && !c.s.HasMaxOutput {
		f := d.Fields.MaxOutput[0]
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: f, Message: f + ": field required"}
	}
	if ep.Op == dialect.CountTokens && c.s.Conversation < 0 {
		// The scan did not look for the conversation (a count body may
		// wrap its request): a count without one is refused on every
		// lane, before any upstream is asked.
		if _, err := countPrompt(d, c.body); err != nil {
			return err
		}
	}
	if err := g.begin(&c); err != nil {
		return err
	}
	var err error
	if ep.Op == dialect.CountTokens {
		c.s.Stream = false
		// Counting is free upstream and local counts take a core, so
		// neither tokens nor budgets apply; the rate and the parallel
		// limits do.
		err = g.admitCount(&c)
	} else {
		err = g.admit(&c)
	}
	if err != nil {
		return err
	}
	return g.forward(&c)
}

// readRequest does the checks every model endpoint shares (the dialect's
// required header, the body size, its JSON, the model and the
// conversation) and fills in c.
func (g *Gateway) readRequest(c *call, w http.ResponseWriter, r *http.Request, x *exchange) error {
	d := x.dialect
	if h := d.RequiredHeader; h != "" && r.Header.Get(h) == "" {
		return newError(http.StatusBadRequest, dialect.InvalidRequest, strings.ToLower(h)+": header is required")
	}
	body, err := g.readBody(w, r, x)
	if err != nil {
		return err
	}
	f := &d.Fields
	switch {
	case c.fields != nil:
		f = c.fields
	case c.addr != nil && c.addr.Fields != nil:
		f = c.addr.Fields
	}
	s, err := dialect.Scan(body, f)
	c.addr.Apply(&s) // a URL-addressed request's model and stream are in its path
	if err != nil {
		return scanRefusal(err)
	}
	if !s.HasModel || len(s.Model) == 0 {
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "model", Message: "model: field required"}
	}
	x.model = dialect.Clip(string(s.Model))
	x.stream = s.Stream
	// An operation whose fields name no conversation has it elsewhere in
	// its body (a count's may be wrapped): countPrompt checks it there.
	if f.Conversation != "" {
		if err := needConversation(f.Conversation, s.Conversation); err != nil {
			return err
		}
	}
	x.reqBody = body
	if d.Session != nil {
		// The agent session the client names, read from what it sent
		// (before a lifecycle hook expands the body).
		x.session = d.Session(r.Header, body)
	}
	m := x.gen.routes.Lookup(s.Model)
	if m != nil {
		x.routed, x.canonical = m.Name, m.Name
	}
	if m == nil {
		return unknownModel(x.model, nil)
	}
	if err := x.allow(m); err != nil {
		return err
	}
	*c = call{w: w, r: r, x: x, m: m, body: body, s: s, addr: c.addr, fields: c.fields}
	return nil
}

// needConversation refuses a request whose conversation member conv is
// absent (n is -1) or empty (0), as dialect.Scanned.Conversation says.
func needConversation(conv string, n int) error {
	switch n {
	case -1:
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: conv, Message: conv + ": field required"}
	case 0:
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: conv, Message: conv + ": at least one message is required"}
	}
	return nil
}

// allow checks that the request's key may use model m. A model the key
// may not use is answered exactly as one that does not exist, so a key
// cannot learn which other models the gateway serves; the log says why.
//
// A model the person's team (or the user) may not use is refused as such,
// 400 invalid_request_error: the policy is the team's own, and Claude
// Code shows that answer to the developer.
func (x *exchange) allow(m *route.Model) error {
	if x.key != nil && !x.key.AllowsModel(m.Name, m.Aliases) {
		x.routed = "" // as for an unknown name: no model label, no model limits
		return unknownModel(x.model, errors.New("the key may not use this model"))
	}
	if !x.person.AllowsModel(m.Name, m.Aliases) {
		x.routed = ""
		msg := fmt.Sprintf("model %q is not available to you", x.model)
		if x.person.Team != "" {
			msg = fmt.Sprintf("model %q is not available to team %q; GET /v1/models lists the models you may use", x.model, x.person.Team)
		}
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "model", Code: "model_not_allowed",
			Message: msg, Err: errors.New("the team or user may not use this model")}
	}
	return nil
}

func (x *exchange) mayUse(m *route.Model) bool {
	return (x.key == nil || x.key.AllowsModel(m.Name, m.Aliases)) && x.person.AllowsModel(m.Name, m.Aliases)
}

// unknownModel is the answer for a model name that does not exist (or that
// the key may not use: why is the cause, for the log only).
func unknownModel(name string, why error) *Error {
	return &Error{Status: http.StatusNotFound, Kind: dialect.NotFound, Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("model %q does not exist; GET /v1/models lists the models this gateway serves", name), Err: why}
}

// readBody reads the whole request body, at most maxBody bytes (after
// decompression too), into a pooled buffer that the exchange releases
// when the request is done, counted against the buffer budget.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request, x *exchange) ([]byte, error) {
	if r.ContentLength > g.maxBody {
		return nil, g.tooLarge()
	}
	x.bodyRead = true
	gzipped, err := gzipCoded(r)
	if err != nil {
		return nil, err
	}
	rd := http.MaxBytesReader(w, r.Body, g.maxBody)
	var bb *bodyBuf
	if r.ContentLength > 0 {
		n := int(r.ContentLength)
		if !g.buffered.take(x, int64(bodyBufCap(n))) {
			return nil, errBuffersFull
		}
		bb = newBodyBuf(n)
		_, err = io.ReadFull(rd, bb.b)
	} else {
		bb, err = g.buffered.readAll(x, rd, g.maxBody)
	}
	if bb != nil {
		x.body = bb
	}
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, g.tooLarge()
		case err == errBuffersFull:
			return nil, err
		}
		return nil, &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Message: "reading request body failed", Err: err}
	}
	body := bb.b
	if gzipped {
		if body, err = g.gunzip(x, body); err != nil {
			return nil, err
		}
	}
	if len(body) == 0 {
		return nil, errEmptyBody
	}
	return body, nil
}

var errEmptyBody = newError(http.StatusBadRequest, dialect.InvalidRequest, "request body is empty; expected a JSON object")

// tooLarge is the answer for a body larger than max_body_bytes.
func (g *Gateway) tooLarge() *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Kind: dialect.TooLarge,
		Message: "request body is larger than the gateway's limit of " + strconv.FormatInt(g.maxBody, 10) + " bytes"}
}

// listModels serves GET /v1/models in the shape of the dialect the
// request is in (dialect.ForRequest). Aliases are listed as models.
func (g *Gateway) listModels(w http.ResponseWriter, r *http.Request, x *exchange) error {
	var ids []string
	for _, m := range x.gen.routes.Models() {
		if !x.mayUse(m) {
			continue // a key sees only the models it may use
		}
		// A pattern (claude-*) names no model a client could pick: the
		// list holds the names it would send.
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			if !config.IsPattern(n) {
				ids = append(ids, n)
			}
		}
	}
	if page := x.dialect.ModelListPage; page != nil {
		q := r.URL.Query()
		v, err := page(ids, q.Get("pageSize"), q.Get("pageToken"))
		if err != nil {
			return scanRefusal(err)
		}
		return writeJSON(w, x, v)
	}
	return writeJSON(w, x, x.dialect.ModelList(ids, g.started))
}

// getModel serves GET /v1/models/{id}.
func (g *Gateway) getModel(w http.ResponseWriter, r *http.Request, x *exchange) error {
	id := r.PathValue("id")
	m := x.gen.routes.Lookup([]byte(id))
	if m == nil {
		return unknownModel(dialect.Clip(id), nil)
	}
	if err := x.allow(m); err != nil {
		return err
	}
	return writeJSON(w, x, x.dialect.Model(id, g.started))
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
