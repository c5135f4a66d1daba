package console

import (
	"context"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/store"
)

// scope is whose records a page reads; a field left "" does not narrow
// it, so the zero scope is everyone's.
type scope struct{ KeyID, UserID, TeamID string }

// own is the scope a viewer may see: everything for an operator, a
// virtual key's own records, a user's own.
func (v *viewer) own() scope {
	switch {
	case v.operator():
		return scope{}
	case v.User != nil:
		return scope{UserID: v.User.ID}
	}
	return scope{KeyID: v.KeyID}
}

// owns reports whether v may see a record of key keyID and user userID.
func (v *viewer) owns(keyID, userID string) bool {
	switch {
	case v.operator():
		return true
	case v.User != nil:
		return userID != "" && userID == v.User.ID
	}
	return keyID != "" && keyID == v.KeyID
}

// usageOf sums the ledger of s over [since, until) by group. The admin
// service answers what it can (by key, model, day, provider); the store
// answers for a user or team and for grouping by either.
func (c *Console) usageOf(ctx context.Context, since, until time.Time, by store.GroupBy, s scope) (admin.UsageReport, error) {
	if s.UserID == "" && s.TeamID == "" && by != store.ByUser && by != store.ByTeam {
		return c.svc().Usage(ctx, admin.UsageQuery{Since: since, Until: until, GroupBy: by, KeyID: s.KeyID})
	}
	groups, err := c.o.Store.Usage(ctx, store.UsageFilter{Since: since, Until: until, GroupBy: by, KeyID: s.KeyID, UserID: s.UserID, TeamID: s.TeamID})
	if err != nil {
		return admin.UsageReport{}, err
	}
	rep := admin.UsageReport{Object: "usage", Since: since.UTC(), Until: until.UTC(), GroupBy: string(by), Data: make([]admin.UsageGroup, 0, len(groups))}
	for _, g := range groups {
		ug := admin.UsageGroup{Group: g.Group, Requests: g.Requests, Errors: g.Errors, CostNanoUSD: g.CostNanoUSD,
			UnpricedRequests: g.Unpriced, EstimatedRequests: g.Estimated, Tokens: admin.Tokens{Input: g.Input, CacheRead: g.CacheRead,
				CacheWrite5m: g.CacheWrite5m, CacheWrite1h: g.CacheWrite1h, Output: g.Output, Reasoning: g.Reasoning},
			CacheSavingsNanoUSD: g.CacheSavingsNanoUSD, CacheSavingsUnknownRequests: g.SavingsUnknown}
		rep.Data = append(rep.Data, ug)
		rep.Total.Add(ug)
	}
	return rep, nil
}
