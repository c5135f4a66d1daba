package limiter

import (
	"strconv"
	"testing"

	"github.com/tollgate/tollgate/internal/limit"
)

// BenchmarkAdmitSettle is one request's cost in limits: a key with rpm,
// tpm and a monthly budget, admitted and settled.
// BenchmarkAdmitSettle admits and settles a request against a key's
// limits alone, and against a key's, its user's and its team's together
// (a person's request): what composing them costs.
func BenchmarkAdmitSettle(b *testing.B) {
	big := limit.Limits{RPM: 1 << 40, TPM: 1 << 40, BudgetUSD: limit.NanoUSD(limit.MaxBudgetUSD * 1e9), BudgetPeriod: "monthly"}
	for _, scopes := range []struct {
		name string
		s    []Scope
	}{
		{"key", []Scope{keyScope("bench", big)}},
		{"key+user+team", []Scope{keyScope("bench", big), {Name: "user:bench", Limits: big, UserID: "bench"}, {Name: "team:bench", Limits: big, TeamID: "bench"}}},
	} {
		b.Run(scopes.name, func(b *testing.B) { admitSettle(b, scopes.s) })
	}
}

func admitSettle(b *testing.B, s []Scope) {
	run := func(b *testing.B, l *Limiter) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			tk, err := l.Admit(ctx, &Request{ID: strconv.Itoa(i), Scopes: s, Tokens: 1000, Cost: 1000})
			if err != nil || tk == nil {
				b.Fatal(err)
			}
			l.Settle(ctx, tk, Used{Tokens: 900, Cost: 900})
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, New(NewMemory(), Options{})) })
	b.Run("redis", func(b *testing.B) {
		url := redisURL(b)
		prefix := "tgbench:" + newEpoch() + ":"
		r, err := newRedis(url, prefix, LeaseTTL, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { r.close(); dropPrefix(b, url, prefix) }()
		run(b, New(r, Options{}))
	})
}
