// Package admin manages virtual keys, users and teams, keeps the audit
// log of their changes and reads the usage ledger: the service behind
// the admin API (/admin/…) and the CLI's keys, users, teams, audit, usage
// and sessions commands, which call it directly on a database or over
// HTTP.
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
)

// Service is safe for concurrent use.
type Service struct {
	store  *store.Store
	routes *route.Table // to check model lists; nil skips the check
	keys   *auth.Cache  // invalidated on changes; nil when not serving
	log    *slog.Logger
	now    func() time.Time
}

// New returns a Service over st. routes checks that keys name known
// models; keys, when this process also serves requests, is told of
// changes so that they apply at once.
func New(st *store.Store, routes *route.Table, keys *auth.Cache, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, routes: routes, keys: keys, log: logger, now: clock.Now}
}

// Error is an admin error with its HTTP status.
type Error struct {
	Status  int
	Type    string
	Message string
	// Header is added to the answer (retry-after).
	Header http.Header
}

func (e *Error) Error() string { return e.Message }

func invalid(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

func notFound(what, id string) *Error {
	return &Error{Status: http.StatusNotFound, Type: "not_found_error", Message: fmt.Sprintf("no %s with id %q", what, id)}
}

// CreateKey makes a virtual key. The answer holds the secret: it is not
// stored and cannot be shown again.
func (s *Service) CreateKey(ctx context.Context, req CreateKey) (KeyView, error) {
	if err := s.checkName(req.Name); err != nil {
		return KeyView{}, err
	}
	if err := s.checkModels(req.Models); err != nil {
		return KeyView{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	if err := checkExpiry(req.ExpiresAt, now); err != nil {
		return KeyView{}, err
	}
	meta, err := checkMetadata(req.Metadata)
	if err != nil {
		return KeyView{}, err
	}
	var own limit.Limits
	if req.Limits != nil {
		own = *req.Limits
	}
	limits, modelLimits, err := s.checkLimits(own, req.ModelLimits)
	if err != nil {
		return KeyView{}, err
	}
	if err := s.checkOwner(ctx, req.UserID, req.TeamID); err != nil {
		return KeyView{}, err
	}
	secret, hash, prefix := auth.NewSecret()
	k := store.Key{ID: auth.NewKeyID(), Name: req.Name, Hash: hash, Prefix: prefix, Models: req.Models,
		Metadata: meta, CreatedAt: now, ExpiresAt: req.ExpiresAt, Limits: limits, ModelLimits: modelLimits,
		UserID: req.UserID, TeamID: req.TeamID}
	if err := s.store.CreateKey(ctx, k); err != nil {
		return KeyView{}, err
	}
	if s.keys != nil {
		s.keys.Known(hash)
	}
	s.log.Info("admin: key created", "key_id", k.ID, "name", k.Name, "prefix", k.Prefix)
	s.audit(ctx, ActionKeyCreated, "key", k.ID, map[string]any{"name": k.Name, "prefix": k.Prefix, "user_id": k.UserID, "team_id": k.TeamID})
	v := keyView(k)
	v.Key = secret
	return v, nil
}

// Keys lists every key, newest first.
func (s *Service) Keys(ctx context.Context) (KeyList, error) {
	keys, err := s.store.Keys(ctx)
	if err != nil {
		return KeyList{}, err
	}
	out := KeyList{Object: "list", Data: make([]KeyView, 0, len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, keyView(k))
	}
	return out, nil
}

// Key returns one key.
func (s *Service) Key(ctx context.Context, id string) (KeyView, error) {
	if err := checkParam("id", id); err != nil {
		return KeyView{}, err
	}
	k, err := s.store.KeyByID(ctx, id)
	if store.IsNotFound(err) {
		return KeyView{}, notFound("key", id)
	}
	if err != nil {
		return KeyView{}, err
	}
	return keyView(k), nil
}

// KeyPatch is a decoded PATCH /admin/keys/{id}: nil fields stay.
type KeyPatch struct {
	Name      *string
	Models    *[]string
	Metadata  jsontext.Value
	ExpiresAt **time.Time // a nil *time.Time removes the expiry
	// Limits and ModelLimits replace the key's as a whole.
	Limits      *limit.Limits
	ModelLimits *map[string]limit.Limits
	// UserID and TeamID set the key's user and team; "" removes one.
	UserID, TeamID *string
}

// UpdateKey changes a key's name, models, metadata or expiry.
func (s *Service) UpdateKey(ctx context.Context, id string, p KeyPatch) (KeyView, error) {
	if err := checkParam("id", id); err != nil {
		return KeyView{}, err
	}
	u := store.KeyUpdate{Name: p.Name, Models: p.Models, ExpiresAt: p.ExpiresAt}
	if p.Name != nil {
		if err := s.checkName(*p.Name); err != nil {
			return KeyView{}, err
		}
	}
	if p.Models != nil {
		if err := s.checkModels(*p.Models); err != nil {
			return KeyView{}, err
		}
	}
	if p.ExpiresAt != nil {
		if err := checkExpiry(*p.ExpiresAt, s.now()); err != nil {
			return KeyView{}, err
		}
	}
	if p.Metadata != nil {
		meta, err := checkMetadata(p.Metadata)
		if err != nil {
			return KeyView{}, err
		}
		u.Metadata = meta
	}
	if p.Limits != nil || p.ModelLimits != nil {
		var own limit.Limits
		var per map[string]limit.Limits
		if p.Limits != nil {
			own = *p.Limits
		}
		if p.ModelLimits != nil {
			per = *p.ModelLimits
		}
		l, ml, err := s.checkLimits(own, per)
		if err != nil {
			return KeyView{}, err
		}
		if p.Limits != nil {
			u.Limits = l
		}
		if p.ModelLimits != nil {
			u.ModelLimits = ml
		}
	}
	if p.UserID != nil || p.TeamID != nil {
		cur, err := s.store.KeyByID(ctx, id)
		if store.IsNotFound(err) {
			return KeyView{}, notFound("key", id)
		}
		if err != nil {
			return KeyView{}, err
		}
		user, team := cur.UserID, cur.TeamID
		if p.UserID != nil {
			user = *p.UserID
		}
		if p.TeamID != nil {
			team = *p.TeamID
		}
		if err := s.checkOwner(ctx, user, team); err != nil {
			return KeyView{}, err
		}
		u.UserID, u.TeamID = p.UserID, p.TeamID
	}
	k, err := s.store.UpdateKey(ctx, id, u)
	if store.IsNotFound(err) {
		return KeyView{}, notFound("key", id)
	}
	if err != nil {
		return KeyView{}, err
	}
	s.invalidate(id)
	s.log.Info("admin: key updated", "key_id", id)
	s.audit(ctx, ActionKeyUpdated, "key", id, p.changed())
	return keyView(k), nil
}

// RevokeKey revokes a key for good. It takes effect at once on this
// process and within auth.HardTTL on every other replica.
func (s *Service) RevokeKey(ctx context.Context, id string) (KeyView, error) {
	if err := checkParam("id", id); err != nil {
		return KeyView{}, err
	}
	yes := true
	k, err := s.store.UpdateKey(ctx, id, store.KeyUpdate{Revoked: &yes})
	if store.IsNotFound(err) {
		return KeyView{}, notFound("key", id)
	}
	if err != nil {
		return KeyView{}, err
	}
	s.invalidate(id)
	s.log.Info("admin: key revoked", "key_id", id, "name", k.Name)
	s.audit(ctx, ActionKeyRevoked, "key", id, map[string]any{"name": k.Name})
	return keyView(k), nil
}

// changed lists the fields a patch sets, for its audit event.
func (p KeyPatch) changed() map[string]any {
	var fields []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"name", p.Name != nil}, {"models", p.Models != nil}, {"metadata", p.Metadata != nil}, {"expires_at", p.ExpiresAt != nil},
		{"limits", p.Limits != nil}, {"model_limits", p.ModelLimits != nil}, {"user_id", p.UserID != nil}, {"team_id", p.TeamID != nil}} {
		if f.set {
			fields = append(fields, f.name)
		}
	}
	return map[string]any{"fields": fields}
}

func (s *Service) invalidate(id string) {
	if s.keys != nil {
		s.keys.Invalidate(id)
	}
}

func (s *Service) checkName(name string) error {
	if err := checkText("name", name, maxNameLen, true); err != nil {
		return err
	}
	if strings.TrimSpace(name) == "" {
		return invalid("name: required, and not blank")
	}
	return nil
}

// checkModels rejects a model list naming a model this gateway does not
// serve: a typo would otherwise lock the key out silently.
func (s *Service) checkModels(models []string) error {
	if len(models) > maxModels {
		return invalid("models: at most %d models, not %d", maxModels, len(models))
	}
	for i, m := range models {
		if m == "" {
			return invalid("models: empty model name")
		}
		if err := checkText(fmt.Sprintf("models[%d]", i), m, maxModelNameLen, true); err != nil {
			return err
		}
		if s.routes != nil && s.routes.Lookup([]byte(m)) == nil {
			return invalid("models: %q is not a model or alias this gateway serves", m)
		}
	}
	return nil
}

// checkExpiry refuses an expiry that is not in the future; nil is none.
func checkExpiry(t *time.Time, now time.Time) error {
	if t != nil && !t.After(now) {
		return invalid("expires_at: %s is not in the future", t.Format(time.RFC3339))
	}
	return nil
}

func checkMetadata(v jsontext.Value) ([]byte, error) {
	if len(v) == 0 || string(v) == "null" {
		return []byte("{}"), nil
	}
	if v.Kind() != '{' {
		return nil, invalid("metadata: must be a JSON object")
	}
	if len(v) > 4*maxMetadataLen { // do not compact megabytes to refuse them
		return nil, invalid("metadata: at most 16 KiB")
	}
	c := v.Clone()
	if err := c.Compact(); err != nil {
		_, msg := jsonx.ExplainAt("metadata", err)
		return nil, invalid("%s", msg)
	}
	if len(c) > maxMetadataLen {
		return nil, invalid("metadata: at most 16 KiB")
	}
	if err := checkMetadataStrings(c); err != nil {
		return nil, err
	}
	return c, nil
}

// checkLimits validates a key's limits and encodes them for the store.
func (s *Service) checkLimits(own limit.Limits, per map[string]limit.Limits) (limits, modelLimits []byte, err error) {
	if err := own.Validate(); err != nil {
		return nil, nil, invalid("limits.%v", err)
	}
	if len(per) > maxModels {
		return nil, nil, invalid("model_limits: at most %d models, not %d", maxModels, len(per))
	}
	for name, l := range per {
		if err := checkText("model_limits: a model name", name, maxModelNameLen, true); err != nil {
			return nil, nil, err
		}
		if name == "" || s.routes != nil && s.routes.Lookup([]byte(name)) == nil {
			return nil, nil, invalid("model_limits: %q is not a model or alias this gateway serves", name)
		}
		if err := l.Validate(); err != nil {
			return nil, nil, invalid("model_limits[%q].%v", name, err)
		}
		if l.BudgetUSD != nil && s.routes != nil {
			if m := s.routes.Lookup([]byte(name)); !m.Priced() {
				return nil, nil, invalid("model_limits[%q].budget_usd: model %q has no price, so a budget cannot count its cost", name, m.Name)
			}
		}
	}
	if limits, err = jsonx.Marshal(own); err != nil {
		return nil, nil, err
	}
	if per == nil {
		per = map[string]limit.Limits{}
	}
	if modelLimits, err = jsonx.Marshal(per); err != nil {
		return nil, nil, err
	}
	return limits, modelLimits, nil
}

func keyView(k store.Key) KeyView {
	v := KeyView{ID: k.ID, Object: "key", Name: k.Name, Prefix: k.Prefix, Models: nonNil(k.Models),
		Metadata: jsontext.Value(k.Metadata), CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt,
		LastUsedAt: k.LastUsedAt, Revoked: k.Revoked, ModelLimits: map[string]limit.Limits{},
		UserID: nullable(k.UserID), TeamID: nullable(k.TeamID)}
	// Stored by checkLimits; an unreadable value shows as none.
	if len(k.Limits) > 0 {
		jsonx.Unmarshal(k.Limits, &v.Limits)
	}
	if len(k.ModelLimits) > 0 {
		jsonx.Unmarshal(k.ModelLimits, &v.ModelLimits)
	}
	return v
}

// nullable is s, or nil for "" (null in JSON).
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// UsageQuery selects what Usage sums.
type UsageQuery struct {
	Since, Until time.Time
	GroupBy      store.GroupBy
	KeyID        string
	// UserID and TeamID keep a user's, a team's records.
	UserID, TeamID string
}

// Usage sums the ledger by group over [Since, Until).
func (s *Service) Usage(ctx context.Context, q UsageQuery) (UsageReport, error) {
	for _, p := range []struct{ name, v string }{{"key", q.KeyID}, {"user_id", q.UserID}, {"team_id", q.TeamID}} {
		if err := checkParam(p.name, p.v); err != nil {
			return UsageReport{}, err
		}
	}
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"since", q.Since}, {"until", q.Until}} {
		if t.t.Year() < 1970 || t.t.Year() > 9999 {
			return UsageReport{}, invalid("%s: %s is out of range (1970 to 9999)", t.name, t.t.Format(time.RFC3339))
		}
	}
	if !q.Since.Before(q.Until) {
		return UsageReport{}, invalid("since (%s) must be before until (%s)", q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))
	}
	switch q.GroupBy {
	case store.ByModel, store.ByKey, store.ByDay, store.ByProvider, store.ByUser, store.ByTeam, store.BySession, store.ByEndpoint:
	default:
		return UsageReport{}, invalid("group_by: %q is not one of model, key, day, provider, user, team, session, endpoint", q.GroupBy)
	}
	groups, err := s.store.Usage(ctx, store.UsageFilter{Since: q.Since, Until: q.Until, GroupBy: q.GroupBy, KeyID: q.KeyID,
		UserID: q.UserID, TeamID: q.TeamID})
	if err != nil {
		return UsageReport{}, err
	}
	rep := UsageReport{Object: "usage", Since: q.Since.UTC(), Until: q.Until.UTC(), GroupBy: string(q.GroupBy),
		Data: make([]UsageGroup, 0, len(groups))}
	for _, g := range groups {
		ug := UsageGroup{Group: g.Group, Requests: g.Requests, Errors: g.Errors, CostNanoUSD: g.CostNanoUSD,
			UnpricedRequests: g.Unpriced, EstimatedRequests: g.Estimated, Tokens: Tokens{Input: g.Input, CacheRead: g.CacheRead,
				CacheWrite5m: g.CacheWrite5m, CacheWrite1h: g.CacheWrite1h, Output: g.Output, Reasoning: g.Reasoning},
			CacheSavingsNanoUSD: g.CacheSavingsNanoUSD, CacheSavingsUnknownRequests: g.SavingsUnknown}
		rep.Data = append(rep.Data, ug)
		rep.Total.Add(ug)
	}
	return rep, nil
}

// Add adds g's counts, tokens, cost and cache savings to t.
func (t *UsageGroup) Add(g UsageGroup) {
	t.Requests += g.Requests
	t.Errors += g.Errors
	t.UnpricedRequests += g.UnpricedRequests
	t.EstimatedRequests += g.EstimatedRequests
	t.Tokens.Input += g.Tokens.Input
	t.Tokens.CacheRead += g.Tokens.CacheRead
	t.Tokens.CacheWrite5m += g.Tokens.CacheWrite5m
	t.Tokens.CacheWrite1h += g.Tokens.CacheWrite1h
	t.Tokens.Output += g.Tokens.Output
	t.Tokens.Reasoning += g.Tokens.Reasoning
	t.CostNanoUSD = addKnown(t.CostNanoUSD, g.CostNanoUSD)
	t.CacheSavingsUnknownRequests += g.CacheSavingsUnknownRequests
	t.CacheSavingsNanoUSD = addKnown(t.CacheSavingsNanoUSD, g.CacheSavingsNanoUSD)
}

// addKnown sums two sums that are nil when nothing of theirs is known.
func addKnown(a, b *int64) *int64 {
	if b == nil {
		return a
	}
	c := *b
	if a != nil {
		c += *a
	}
	return &c
}

// RequestQuery selects ledger records.
type RequestQuery struct {
	Limit   int
	KeyID   string
	Model   string
	Status  int
	Lane    string // passthrough, translated or none (store.Lanes)
	AfterID string
	// UserID, TeamID and SessionID keep a user's, a team's, an agent
	// session's records.
	UserID, TeamID, SessionID string
}

// MaxPage is the largest page of records.
const MaxPage = 1000

// Requests pages the ledger, newest first.
func (s *Service) Requests(ctx context.Context, q RequestQuery) (RequestPage, error) {
	for _, p := range []struct{ name, v string }{{"key", q.KeyID}, {"model", q.Model}, {"after_id", q.AfterID},
		{"user_id", q.UserID}, {"team_id", q.TeamID}, {"session_id", q.SessionID}} {
		if err := checkParam(p.name, p.v); err != nil {
			return RequestPage{}, err
		}
	}
	if q.Lane != "" && !slices.Contains(store.Lanes, q.Lane) {
		return RequestPage{}, invalid("lane: %q is not a lane; use %s", q.Lane, strings.Join(store.Lanes, ", "))
	}
	if q.Limit == 0 {
		q.Limit = 100
	}
	if q.Limit < 1 || q.Limit > MaxPage {
		return RequestPage{}, invalid("limit: must be between 1 and %d", MaxPage)
	}
	if q.AfterID != "" {
		if _, err := s.store.RequestByID(ctx, q.AfterID); store.IsNotFound(err) {
			return RequestPage{}, invalid("after_id: no request with id %q", q.AfterID)
		} else if err != nil {
			return RequestPage{}, err
		}
	}
	recs, err := s.store.Requests(ctx, store.RequestFilter{KeyID: q.KeyID, Model: q.Model, Status: q.Status, Lane: q.Lane,
		AfterID: q.AfterID, Limit: q.Limit + 1, UserID: q.UserID, TeamID: q.TeamID, SessionID: q.SessionID})
	if err != nil {
		return RequestPage{}, err
	}
	page := RequestPage{Object: "list", Data: make([]RequestRecord, 0, min(len(recs), q.Limit))}
	if len(recs) > q.Limit {
		page.HasMore, recs = true, recs[:q.Limit]
	}
	for _, r := range recs {
		page.Data = append(page.Data, recordView(r))
	}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
	}
	return page, nil
}

func recordView(r store.Request) RequestRecord {
	v := RequestRecord{ID: r.ID, Time: r.Time, ClientProtocol: r.ClientProtocol, Endpoint: r.Endpoint, Model: r.Model,
		CanonicalModel: r.CanonicalModel, Provider: r.Provider,
		UpstreamModel: r.UpstreamModel, Lane: r.Lane, Stream: r.Stream, Status: r.Status, ErrorType: r.ErrorType,
		Tokens: Tokens{Input: r.Input, CacheRead: r.CacheRead, CacheWrite5m: r.CacheWrite5m, CacheWrite1h: r.CacheWrite1h,
			Output: r.Output, Reasoning: r.Reasoning},
		CostNanoUSD: r.CostNanoUSD, LatencyMS: r.LatencyMS, TTFBMS: r.TTFBMS, UpstreamMS: r.UpstreamMS,
		OverheadMS: r.OverheadMS, ClientIP: r.ClientIP, UserAgent: r.UserAgent, Attempts: jsonx.Value("[]"),
		UsageEstimated: r.UsageEstimated, CacheSavingsNanoUSD: r.CacheSavingsNano,
		UserID: nullable(r.UserID), TeamID: nullable(r.TeamID), SessionID: nullable(r.SessionID), Units: r.Units, Unit: r.Unit}
	if r.Attempts != "" {
		v.Attempts = jsonx.Value(r.Attempts)
	}
	if r.KeyID != "" {
		id := r.KeyID
		v.KeyID = &id
	}
	return v
}

var errNoBody = errors.New("request body is empty; expected a JSON object")
