// Package limit holds the values of rate limits, concurrency limits and
// USD budgets: what one scope (a key, a key's use of a model, a model) may
// use, as configured, stored with keys and sent to the admin API. Package
// limiter enforces them.
package limit

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/internal/units"
)

// Limits are what one scope may use. A zero field is no limit.
type Limits struct {
	// RPM caps requests in any 60-second window.
	RPM int64 `json:"rpm,omitzero"`
	// TPM caps tokens (input and output; cache buckets as configured) in
	// any 60-second window.
	TPM int64 `json:"tpm,omitzero"`
	// MaxParallel caps requests in flight at once (streams included).
	MaxParallel int64 `json:"max_parallel,omitzero"`
	// BudgetUSD caps spend in each BudgetPeriod.
	BudgetUSD *USD `json:"budget_usd,omitempty"`
	// BudgetPeriod is total (the default), daily, monthly, or a rolling
	// window such as 24h or 30d.
	BudgetPeriod Period `json:"budget_period,omitempty"`
}

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool {
	return l.RPM == 0 && l.TPM == 0 && l.MaxParallel == 0 && l.BudgetUSD == nil
}

// Over fills the fields l leaves unset from defaults. The budget and its
// period go together: a scope with its own budget keeps its own period.
func (l Limits) Over(defaults Limits) Limits {
	if l.RPM == 0 {
		l.RPM = defaults.RPM
	}
	if l.TPM == 0 {
		l.TPM = defaults.TPM
	}
	if l.MaxParallel == 0 {
		l.MaxParallel = defaults.MaxParallel
	}
	if l.BudgetUSD == nil {
		l.BudgetUSD, l.BudgetPeriod = defaults.BudgetUSD, defaults.BudgetPeriod
	}
	return l
}

// MaxBudgetUSD bounds budgets so that every amount stays exact in the
// double-precision numbers of Redis's Lua (2^53 nano-USD is 9.007 million USD).
const MaxBudgetUSD = 9_000_000

// Validate reports the first invalid field, named as in the API.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"rpm", l.RPM}, {"tpm", l.TPM}, {"max_parallel", l.MaxParallel}} {
		if f.v < 0 {
			return fmt.Errorf("%s: must be a positive integer (omit it for no limit)", f.name)
		}
		if f.v > 1<<40 {
			return fmt.Errorf("%s: too large", f.name)
		}
	}
	if l.BudgetUSD != nil && l.BudgetUSD.Nano() > MaxBudgetUSD*1e9 {
		return fmt.Errorf("budget_usd: at most %d", MaxBudgetUSD)
	}
	if _, err := ParsePeriod(string(l.BudgetPeriod)); err != nil {
		return fmt.Errorf("budget_period: %w", err)
	}
	if l.BudgetPeriod != "" && l.BudgetUSD == nil {
		return fmt.Errorf("budget_period: set without budget_usd")
	}
	return nil
}

// USD is an exact amount of US dollars, held as nano-USD. In JSON and YAML
// it is a decimal number (or a string holding one) with at most nine
// decimal places; it is never read through a float.
type USD struct{ nano int64 }

// NanoUSD returns the amount n nano-USD.
func NanoUSD(n int64) *USD { return &USD{nano: n} }

// Nano returns the amount in nano-USD.
func (u *USD) Nano() int64 {
	if u == nil {
		return 0
	}
	return u.nano
}

// ParseUSD reads a non-negative decimal such as "25", "0.5" or "12.345".
func ParseUSD(s string) (*USD, error) {
	n, err := units.ParseNano(s)
	switch {
	case errors.Is(err, units.ErrPrecision):
		return nil, fmt.Errorf("%q has more than nine decimal places", s)
	case errors.Is(err, units.ErrRange):
		return nil, fmt.Errorf("%q is too large", s)
	case err != nil:
		return nil, fmt.Errorf("%q is not an amount of USD such as 25 or 0.5", s)
	}
	return &USD{nano: n}, nil
}

// String renders the amount as a decimal without trailing zeros.
func (u USD) String() string { return units.FormatNano(u.nano, 0) }

// MarshalJSON writes the amount as a JSON number.
func (u USD) MarshalJSON() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalJSON reads a JSON number or a string holding one.
func (u *USD) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := ParseUSD(s)
	if err != nil {
		return err
	}
	*u = *v
	return nil
}

// UnmarshalText reads the decimal text (YAML scalars, flags).
func (u *USD) UnmarshalText(b []byte) error {
	v, err := ParseUSD(string(b))
	if err != nil {
		return err
	}
	*u = *v
	return nil
}

// Period is when a budget starts again: "total" (never; the default),
// "daily" or "monthly" (calendar days and months, UTC), or a rolling
// window given as a duration: "24h", "7d", "30d".
type Period string

// Span is a parsed Period.
type Span struct {
	kind   byte          // 't' total, 'd' daily, 'm' monthly, 'r' rolling
	window time.Duration // for rolling periods
	text   string        // as written
}

// ParsePeriod checks and parses a budget period.
func ParsePeriod(s string) (Span, error) {
	switch s {
	case "", "total":
		return Span{kind: 't'}, nil
	case "daily":
		return Span{kind: 'd'}, nil
	case "monthly":
		return Span{kind: 'm'}, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return Span{}, fmt.Errorf("%q: want total, daily, monthly or a rolling window such as 24h or 30d", s)
	}
	if d < time.Minute || d > 366*24*time.Hour || d%time.Second != 0 {
		return Span{}, fmt.Errorf("%q: a rolling window is whole seconds between 1m and 366d", s)
	}
	return Span{kind: 'r', window: d, text: s}, nil
}

// Words names the period in a message: "total", "daily", "monthly", or
// "rolling 30d".
func (p Span) Words() string {
	switch p.kind {
	case 'd':
		return "daily"
	case 'm':
		return "monthly"
	case 'r':
		return "rolling " + p.text
	}
	return "total"
}

// At returns the period that holds t: an id that names it (distinct for
// every period definition, so changing a key's period starts afresh) and its
// start and end. Rolling and total periods have no calendar bounds: start is
// where the ledger is summed from, end is zero.
func (p Span) At(t time.Time) (id string, start, end time.Time) {
	t = t.UTC()
	switch p.kind {
	case 'd':
		y, m, d := t.Date()
		start = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		return "d" + strconv.Itoa(y*10000+int(m)*100+d), start, start.AddDate(0, 0, 1)
	case 'm':
		y, m, _ := t.Date()
		start = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return "m" + strconv.Itoa(y*100+int(m)), start, start.AddDate(0, 1, 0)
	case 'r':
		return "r" + strconv.FormatInt(p.window.Milliseconds(), 10), t.Add(-p.window - p.Slot()), time.Time{}
	}
	return "t", time.Time{}, time.Time{}
}

// Slot is the granularity of a rolling window: a sixtieth of it.
func (p Span) Slot() time.Duration {
	if p.kind != 'r' {
		return 0
	}
	return p.window / WindowSlots
}

// WindowSlots is how many slots a sliding window is cut into. Counts are
// kept per slot and leave the window whole, one slot after the window has
// passed them entirely, so a limit is never exceeded in any window of the
// nominal width; an amount is forgotten at most one slot late.
const WindowSlots = 60
