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

// usageOf sums the ledger of s over [since, until) by group.
func (c *Console) usageOf(ctx context.Context, since, until time.Time, by store.GroupBy, s scope) (admin.UsageReport, error) {
	return c.svc().Usage(ctx, admin.UsageQuery{Since: since, Until: until, GroupBy: by, KeyID: s.KeyID, UserID: s.UserID, TeamID: s.TeamID})
}
