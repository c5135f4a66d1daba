package cli

import (
	"cmp"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/limit"
)

// limitFlags are the limit options of keys create and keys update.
type limitFlags struct {
	model *string
}

func addLimitFlags(fs *flag.FlagSet) limitFlags {
	fs.String("rpm", "", "requests per minute (0: no limit)")
	fs.String("tpm", "", "tokens per minute (0: no limit)")
	fs.String("max-parallel", "", "requests in flight at once (0: no limit)")
	fs.String("budget-usd", "", "USD budget per period, such as 25 or 0.5 (none: no budget)")
	fs.String("budget-period", "", "total (default), daily, monthly (calendar UTC), or rolling: 24h, 7d, 30d")
	return limitFlags{model: fs.String("model", "", "apply the limits to the key's use of this model only")}
}

var limitFlagNames = []string{"rpm", "tpm", "max-parallel", "budget-usd", "budget-period"}

// any reports whether a limit flag was given.
func (lf limitFlags) any(fs *flag.FlagSet) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || slices.Contains(limitFlagNames, f.Name) })
	return found
}

// apply changes own, or per[--model], by the limit flags given.
func (lf limitFlags) apply(fs *flag.FlagSet, own *limit.Limits, per map[string]limit.Limits) error {
	l := own
	var scoped limit.Limits
	if *lf.model != "" {
		scoped = per[*lf.model]
		l = &scoped
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		v := strings.TrimSpace(f.Value.String())
		switch f.Name {
		case "rpm", "tpm", "max-parallel":
			n, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil || n < 0 {
				err = fmt.Errorf("--%s %q: want a whole number, 0 for no limit", f.Name, v)
				return
			}
			*map[string]*int64{"rpm": &l.RPM, "tpm": &l.TPM, "max-parallel": &l.MaxParallel}[f.Name] = n
		case "budget-usd":
			if v == "none" || v == "" {
				l.BudgetUSD, l.BudgetPeriod = nil, ""
				return
			}
			u, perr := limit.ParseUSD(v)
			if perr != nil {
				err = fmt.Errorf("--budget-usd: %w", perr)
				return
			}
			l.BudgetUSD = u
		}
	})
	if err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) { // the period after the amount it goes with
		if f.Name == "budget-period" {
			l.BudgetPeriod = limit.Period(strings.TrimSpace(f.Value.String()))
		}
	})
	if err := l.Validate(); err != nil {
		return err
	}
	if *lf.model != "" {
		if scoped.IsZero() {
			delete(per, *lf.model)
		} else {
			per[*lf.model] = scoped
		}
	}
	return nil
}

// describeLimits renders a key's limits for a table: "rpm 60, $25/monthly".
func describeLimits(k admin.KeyView) string { return cmp.Or(k.LimitsText(), "-") }
