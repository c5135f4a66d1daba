package admin

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/limit"
)

// LimitsText renders the key's limits for people: "rpm 60, $25/monthly,
// claude-opus-4-1: $5/daily"; "" when it has none.
func (k KeyView) LimitsText() string {
	parts := LimitWords(k.Limits)
	models := make([]string, 0, len(k.ModelLimits))
	for m := range k.ModelLimits {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		if w := LimitWords(k.ModelLimits[m]); len(w) > 0 {
			parts = append(parts, m+": "+strings.Join(w, " "))
		}
	}
	return strings.Join(parts, ", ")
}

// LimitWords renders each limit set in l: "rpm 60", "$25/monthly".
func LimitWords(l limit.Limits) []string {
	var w []string
	for _, f := range []struct {
		name string
		v    int64
	}{{"rpm", l.RPM}, {"tpm", l.TPM}, {"parallel", l.MaxParallel}} {
		if f.v > 0 {
			w = append(w, f.name+" "+strconv.FormatInt(f.v, 10))
		}
	}
	if l.BudgetUSD != nil {
		p := string(l.BudgetPeriod)
		if p == "" {
			p = "total"
		}
		w = append(w, "$"+l.BudgetUSD.String()+"/"+p)
	}
	return w
}
