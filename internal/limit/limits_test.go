package limit

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/jsonx"
)

func TestParseUSD(t *testing.T) {
	for _, tc := range []struct {
		in   string
		nano int64
		err  string
	}{
		{"25", 25e9, ""},
		{"0.5", 5e8, ""},
		{"0.000000001", 1, ""},
		{"12.345", 12_345_000_000, ""},
		{"9000000", 9e15, ""},
		{"0.1", 100_000_000, ""}, // never a float: 0.1 is exact
		{"-1", 0, "not an amount"},
		{"1e3", 0, "not an amount"},
		{"1.", 0, "not an amount"},
		{".5", 0, "not an amount"},
		{"0.0000000001", 0, "nine decimal places"},
		{"10000000000", 0, "too large"},
	} {
		u, err := ParseUSD(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseUSD(%q) = %v, %v; want error %q", tc.in, u, err, tc.err)
			}
			continue
		}
		if err != nil || u.Nano() != tc.nano {
			t.Errorf("ParseUSD(%q) = %v, %v; want %d nano", tc.in, u.Nano(), err, tc.nano)
		}
	}
}

func TestUSDJSON(t *testing.T) {
	var l Limits
	if err := jsonx.Unmarshal([]byte(`{"rpm":5,"budget_usd":12.5,"budget_period":"monthly"}`), &l); err != nil {
		t.Fatal(err)
	}
	if l.BudgetUSD.Nano() != 12_500_000_000 || l.RPM != 5 {
		t.Fatalf("decoded %+v", l)
	}
	b, err := jsonx.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"rpm":5,"budget_usd":12.5,"budget_period":"monthly"}`; got != want {
		t.Errorf("encoded %s, want %s", got, want)
	}
	if err := jsonx.Unmarshal([]byte(`{"budget_usd":"0.30"}`), &l); err != nil || l.BudgetUSD.Nano() != 3e8 {
		t.Errorf("string amount: %v %v", l.BudgetUSD, err)
	}
	if err := jsonx.Unmarshal([]byte(`{"budget_usd":-3}`), &l); err == nil {
		t.Error("a negative budget was accepted")
	}
}

func TestValidate(t *testing.T) {
	usd := func(s string) *USD { u, _ := ParseUSD(s); return u }
	for _, tc := range []struct {
		l   Limits
		err string
	}{
		{Limits{}, ""},
		{Limits{RPM: 10, TPM: 1000, MaxParallel: 2, BudgetUSD: usd("5"), BudgetPeriod: "daily"}, ""},
		{Limits{BudgetUSD: usd("5"), BudgetPeriod: "30d"}, ""},
		{Limits{BudgetUSD: usd("5"), BudgetPeriod: "12h"}, ""},
		{Limits{RPM: -1}, "rpm"},
		{Limits{MaxParallel: -2}, "max_parallel"},
		{Limits{BudgetPeriod: "daily"}, "without budget_usd"},
		{Limits{BudgetUSD: usd("5"), BudgetPeriod: "weekly"}, "budget_period"},
		{Limits{BudgetUSD: usd("5"), BudgetPeriod: "30s"}, "between 1m and 366d"},
		{Limits{BudgetUSD: usd("9000001")}, "at most"},
	} {
		err := tc.l.Validate()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.l, err, tc.err)
		}
	}
}

func TestOver(t *testing.T) {
	d := Limits{RPM: 100, TPM: 5000, BudgetUSD: NanoUSD(10), BudgetPeriod: "daily"}
	got := Limits{RPM: 5, BudgetUSD: NanoUSD(3)}.Over(d)
	if got.RPM != 5 || got.TPM != 5000 || got.BudgetUSD.Nano() != 3 || got.BudgetPeriod != "" {
		t.Errorf("Over = %+v", got)
	}
	if got := (Limits{}).Over(d); got.BudgetPeriod != "daily" || got.BudgetUSD.Nano() != 10 {
		t.Errorf("empty Over = %+v", got)
	}
}

func TestPeriodSpan(t *testing.T) {
	at := time.Date(2026, 11, 22, 17, 30, 0, 0, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		p          Period
		id         string
		start, end time.Time
	}{
		{"daily", "d20261122", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"monthly", "m202611", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"", "t", time.Time{}, time.Time{}},
		{"24h", "r86400000", at.UTC().Add(-24*time.Hour - 24*time.Minute), time.Time{}},
	} {
		p, err := ParsePeriod(string(tc.p))
		if err != nil {
			t.Fatal(err)
		}
		id, start, end := p.At(at)
		if id != tc.id || !start.Equal(tc.start) || !end.Equal(tc.end) {
			t.Errorf("%q: span = %s %s %s", tc.p, id, start, end)
		}
	}
}
