package admin

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/units"
)

// maxBody bounds an admin request body.
const maxBody = 1 << 20

// Handler serves the admin API under /admin/. The master key may use it,
// and so may an operator (identity.oidc.admin_groups) with their own
// sign-in token; a virtual key or another person gets 403, anything else
// 401. Its changes are audited
// as the master key's, unless the request's context names another actor
// (WithActor).
func Handler(s *Service, a *auth.Authenticator) http.Handler {
	h := &handler{s: s}
	mux := http.NewServeMux()
	mux.HandleFunc("/admin/keys", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: h.listKeys, http.MethodPost: h.createKey}))
	mux.HandleFunc("/admin/keys/{id}", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: h.getKey, http.MethodPatch: h.patchKey, http.MethodDelete: h.revokeKey}))
	mux.HandleFunc("/admin/users", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: h.listUsers, http.MethodPost: h.createUser}))
	mux.HandleFunc("/admin/users/{id}", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: byID(s.User), http.MethodPatch: h.patchUser, http.MethodDelete: byID(s.DeleteUser)}))
	mux.HandleFunc("/admin/users/{id}/keys", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: byID(s.UserKeys)}))
	mux.HandleFunc("/admin/teams", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: h.listTeams, http.MethodPost: h.createTeam}))
	mux.HandleFunc("/admin/teams/{id}", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: byID(s.Team), http.MethodPatch: h.patchTeam, http.MethodDelete: byID(s.DeleteTeam)}))
	mux.HandleFunc("/admin/teams/{id}/members", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: byID(s.Members)}))
	mux.HandleFunc("/admin/teams/{id}/members/{user_id}", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodPut: member(s.AddMember), http.MethodDelete: member(s.RemoveMember)}))
	mux.HandleFunc("/admin/audit", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: h.audit}))
	mux.HandleFunc("/admin/sessions", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: h.sessions}))
	mux.HandleFunc("/admin/usage", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: h.usage}))
	mux.HandleFunc("/admin/requests", h.methods(map[string]func(http.ResponseWriter, *http.Request) error{
		http.MethodGet: h.requests}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &Error{Status: http.StatusNotFound, Type: "not_found_error", Message: "no such admin endpoint: " + r.Method + " " + r.URL.Path})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Check(r)
		switch {
		case err != nil:
			writeError(w, authError(err))
		case p.Master:
			mux.ServeHTTP(w, withOrigin(w, r))
		case p.Key == nil && p.Person != nil && p.Person.Admin:
			// An operator signed in through the IdP (admin_groups): their
			// own token, never a key they own. Audited as themselves.
			mux.ServeHTTP(w, withOrigin(w, r.WithContext(WithActor(r.Context(), ActorUser, p.Person.UserID))))
		default:
			writeError(w, &Error{Status: http.StatusForbidden, Type: "permission_error", Message: "the admin API takes the master key or an operator's sign-in token; virtual keys and other people's tokens may not use it"})
		}
	})
}

// authError renders a refused credential: 400 for more than one, 429
// with retry-after for a throttled address, 503 when keys cannot be
// checked, else 401 with one message for every invalid key.
func authError(err error) *Error {
	e := &Error{Status: auth.Status(err), Type: "authentication_error", Message: err.Error()}
	switch e.Status {
	case http.StatusBadRequest:
		e.Type = "invalid_request_error"
	case http.StatusTooManyRequests:
		e.Type = "rate_limit_error"
		if d, ok := auth.RetryAfter(err); ok {
			e.Header = http.Header{"Retry-After": {strconv.Itoa(int(d / time.Second))}}
		}
	case http.StatusServiceUnavailable:
		e.Type = "api_error"
	}
	return e
}

type handler struct{ s *Service }

// methods dispatches by method, answering 405 with Allow in the API's own
// envelope, and renders a returned error.
func (h *handler) methods(m map[string]func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	var allowed []string
	for _, meth := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m[meth] != nil {
			allowed = append(allowed, meth)
		}
	}
	allow := strings.Join(allowed, ", ")
	return func(w http.ResponseWriter, r *http.Request) {
		f := m[r.Method]
		if f == nil {
			w.Header().Set("Allow", allow)
			writeError(w, &Error{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
				Message: "method " + r.Method + " is not allowed on " + r.URL.Path + "; use " + allow})
			return
		}
		if err := f(w, r); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				h.s.log.Error("admin: request failed", "method", r.Method, "path", r.URL.Path, "error", err)
				e = &Error{Status: http.StatusInternalServerError, Type: "api_error", Message: "internal error"}
			}
			writeError(w, e)
		}
	}
}

func (h *handler) createKey(w http.ResponseWriter, r *http.Request) error {
	var req CreateKey
	if err := readJSON(r, &req); err != nil {
		return err
	}
	k, err := h.s.CreateKey(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, k)
}

func (h *handler) listKeys(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := onlyParams(q, "user_id"); err != nil {
		return err
	}
	if q.Has("user_id") {
		l, err := h.s.UserKeys(r.Context(), q.Get("user_id"))
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusNotFound {
			return invalid("user_id: no user with id %q", q.Get("user_id"))
		}
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, l)
	}
	l, err := h.s.Keys(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, l)
}

func (h *handler) getKey(w http.ResponseWriter, r *http.Request) error {
	k, err := h.s.Key(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, k)
}

func (h *handler) patchKey(w http.ResponseWriter, r *http.Request) error {
	var fields map[string]jsontext.Value
	if err := readJSON(r, &fields); err != nil {
		return err
	}
	var p KeyPatch
	for name, v := range fields {
		var err error
		switch name {
		case "name":
			p.Name = new(string)
			err = jsonx.Unmarshal(v, p.Name)
		case "models":
			p.Models = new([]string)
			err = jsonx.Unmarshal(v, p.Models)
			if *p.Models == nil {
				*p.Models = []string{} // null: every model
			}
		case "metadata":
			p.Metadata = v
		case "expires_at":
			p.ExpiresAt = new(*time.Time)
			err = jsonx.Unmarshal(v, p.ExpiresAt)
		case "limits":
			p.Limits = new(limit.Limits)
			err = jsonx.UnmarshalStrict(v, p.Limits) // null: no limits of its own
		case "model_limits":
			p.ModelLimits = new(map[string]limit.Limits)
			err = jsonx.UnmarshalStrict(v, p.ModelLimits)
		case "user_id":
			p.UserID = new(string) // null: none
			err = jsonx.Unmarshal(v, p.UserID)
		case "team_id":
			p.TeamID = new(string)
			err = jsonx.Unmarshal(v, p.TeamID)
		case "revoked":
			return invalid("revoked: revoke a key with DELETE /admin/keys/{id}; revocation cannot be undone")
		default:
			return invalid("unknown field %q; a key's name, models, metadata, expires_at, limits, model_limits, user_id and team_id can be changed", name)
		}
		if err != nil {
			_, msg := jsonx.ExplainAt(name, err)
			return invalid("%s", msg)
		}
	}
	k, err := h.s.UpdateKey(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, k)
}

func (h *handler) revokeKey(w http.ResponseWriter, r *http.Request) error {
	k, err := h.s.RevokeKey(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, k)
}

func (h *handler) usage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := onlyParams(q, "since", "until", "group_by", "key", "user_id", "team_id"); err != nil {
		return err
	}
	now := h.s.now()
	until, err := ParseTime(q.Get("until"), now, now)
	if err != nil {
		return invalid("until: %v", err)
	}
	since, err := ParseTime(q.Get("since"), now, until.Add(-24*time.Hour))
	if err != nil {
		return invalid("since: %v", err)
	}
	group := store.GroupBy(q.Get("group_by"))
	if group == "" {
		group = store.ByModel
	}
	rep, err := h.s.Usage(r.Context(), UsageQuery{Since: since, Until: until, GroupBy: group, KeyID: q.Get("key"),
		UserID: q.Get("user_id"), TeamID: q.Get("team_id")})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

func (h *handler) requests(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := onlyParams(q, "limit", "key", "model", "status", "lane", "after_id", "user_id", "team_id", "session_id"); err != nil {
		return err
	}
	rq := RequestQuery{KeyID: q.Get("key"), Model: q.Get("model"), Lane: q.Get("lane"), AfterID: q.Get("after_id"),
		UserID: q.Get("user_id"), TeamID: q.Get("team_id"), SessionID: q.Get("session_id")}
	for _, p := range []struct {
		name string
		dst  *int
	}{{"limit", &rq.Limit}, {"status", &rq.Status}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return invalid("%s: %q is not a non-negative integer", p.name, v)
			}
			*p.dst = n
		}
	}
	if q.Has("limit") && rq.Limit == 0 {
		return invalid("limit: must be between 1 and %d", MaxPage)
	}
	page, err := h.s.Requests(r.Context(), rq)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (h *handler) audit(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := onlyParams(q, "actor_id", "action", "target_id", "since", "until", "before", "limit"); err != nil {
		return err
	}
	aq := AuditQuery{ActorID: q.Get("actor_id"), Action: q.Get("action"), TargetID: q.Get("target_id")}
	var err error
	if aq.Since, aq.Until, aq.Limit, err = h.window(q); err != nil {
		return err
	}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return invalid("before: %q is not an event id (a positive integer)", v)
		}
		aq.Before = n
	}
	page, err := h.s.Audit(r.Context(), aq)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

func (h *handler) sessions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := onlyParams(q, "user_id", "team_id", "key_id", "since", "until", "limit"); err != nil {
		return err
	}
	sq := SessionQuery{UserID: q.Get("user_id"), TeamID: q.Get("team_id"), KeyID: q.Get("key_id")}
	var err error
	if sq.Since, sq.Until, sq.Limit, err = h.window(q); err != nil {
		return err
	}
	l, err := h.s.Sessions(r.Context(), sq)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, l)
}

// window reads since and until (zero when absent) and limit (0 when
// absent).
func (h *handler) window(q url.Values) (since, until time.Time, limit int, err error) {
	now := h.s.now()
	if since, err = ParseTime(q.Get("since"), now, time.Time{}); err != nil {
		return since, until, 0, invalid("since: %v", err)
	}
	if until, err = ParseTime(q.Get("until"), now, time.Time{}); err != nil {
		return since, until, 0, invalid("until: %v", err)
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > MaxPage {
			return since, until, 0, invalid("limit: must be between 1 and %d", MaxPage)
		}
	}
	return since, until, limit, nil
}

// ParseTime reads a time parameter: RFC 3339, a date (UTC midnight), or a
// duration before now such as 24h, 90m or 7d. Empty gives def.
func ParseTime(s string, now, def time.Time) (time.Time, error) {
	if s == "" {
		return def, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := units.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, errors.New("want an RFC 3339 time (2026-11-22T10:00:00Z), a date (2026-11-22) or a duration ago (24h, 7d)")
}

func onlyParams(q map[string][]string, names ...string) error {
	for k := range q {
		known := false
		for _, n := range names {
			known = known || k == n
		}
		if !known {
			return invalid("unknown query parameter %q; this endpoint takes %s", k, strings.Join(names, ", "))
		}
	}
	return nil
}

func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &Error{Status: http.StatusRequestEntityTooLarge, Type: "request_too_large", Message: "request body is larger than 1 MiB"}
		}
		return invalid("the request body could not be read")
	}
	if len(body) == 0 {
		return invalid("%v", errNoBody)
	}
	if err := jsonx.UnmarshalStrict(body, v); err != nil {
		_, msg := jsonx.Explain(err) // the library's own message names Go types
		return invalid("%s", msg)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
	return nil
}

func writeError(w http.ResponseWriter, e *Error) {
	for k, v := range e.Header {
		w.Header()[k] = v
	}
	writeJSON(w, e.Status, ErrorBody{Type: "error", Error: ErrorInfo{Type: e.Type, Message: e.Message}})
}
