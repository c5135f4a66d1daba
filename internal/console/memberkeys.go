package console

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
)

// memberRules bound the keys a user who is not an operator makes for
// themselves: charged to their primary team, naming only the models
// they may use, and limited at most as each member is.
type memberRules struct {
	TeamID, Team string
	// Models is the allowlist: the user's own, else their team's; empty
	// allows every model.
	Models []string
	// Limits are each member's: the user's own, else the team's.
	Limits limit.Limits
}

func (c *Console) memberRules(ctx context.Context, u *store.User) memberRules {
	var m memberRules
	t, ok := c.primaryTeam(ctx, u)
	if ok {
		m.TeamID, m.Team, m.Models, m.Limits = t.ID, t.Name, t.Models, t.MemberLimits
	}
	if len(u.Models) > 0 {
		m.Models = u.Models
	}
	if own := limitsOf(u.Limits); !own.IsZero() {
		m.Limits = own
	}
	return m
}

// LimitsText renders the member limits for the key form.
func (m memberRules) LimitsText() string { return strings.Join(admin.LimitWords(m.Limits), ", ") }

// apply checks a new key's models and limits against the rules. A model
// outside the allowlist or a limit above the member's is refused; what
// the form leaves empty takes the rules' value, so that no key of a
// member's can do more than the member may.
func (m memberRules) apply(models []string, l limit.Limits) ([]string, limit.Limits, error) {
	if len(m.Models) > 0 {
		if len(models) == 0 {
			models = slices.Clone(m.Models)
		}
		for _, x := range models {
			if !slices.Contains(m.Models, x) {
				return nil, l, fieldError("models", fmt.Sprintf("%s is not a model you may use; yours are %s", x, strings.Join(m.Models, ", ")))
			}
		}
	}
	for _, f := range []struct {
		name     string
		key, max *int64
	}{{"rpm", &l.RPM, &m.Limits.RPM}, {"tpm", &l.TPM, &m.Limits.TPM}, {"max_parallel", &l.MaxParallel, &m.Limits.MaxParallel}} {
		switch {
		case *f.max == 0:
		case *f.key == 0:
			*f.key = *f.max
		case *f.key > *f.max:
			return nil, l, fieldError(f.name, fmt.Sprintf("at most %d, each member's limit", *f.max))
		}
	}
	if m.Limits.BudgetUSD != nil {
		period := cmpOr(string(m.Limits.BudgetPeriod), "total")
		switch {
		case l.BudgetUSD == nil:
			l.BudgetUSD, l.BudgetPeriod = m.Limits.BudgetUSD, m.Limits.BudgetPeriod
		case cmpOr(string(l.BudgetPeriod), "total") != period:
			return nil, l, fieldError("budget_period", "must be "+period+", the period of each member's budget")
		case l.BudgetUSD.Nano() > m.Limits.BudgetUSD.Nano():
			return nil, l, fieldError("budget_usd", "at most $"+m.Limits.BudgetUSD.String()+" "+period+", each member's budget")
		}
	}
	return models, l, nil
}
