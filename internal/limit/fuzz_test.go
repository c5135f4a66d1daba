package limit

import (
	"testing"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// FuzzLimitsJSON: any input either fails to decode or validate, or is a
// limits object that encodes and decodes back to itself, with exact
// amounts.
func FuzzLimitsJSON(f *testing.F) {
	for _, s := range []string{
		`{"rpm":60,"tpm":100000,"max_parallel":4,"budget_usd":12.5,"budget_period":"monthly"}`,
		`{"budget_usd":"0.000000001","budget_period":"30d"}`,
		`{"budget_usd":9000000}`, `{"rpm":-1}`, `{"budget_usd":1e3}`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var l Limits
		if jsonx.UnmarshalStrict(b, &l) != nil || l.Validate() != nil {
			return
		}
		out, err := jsonx.Marshal(l)
		if err != nil {
			t.Fatalf("encoding %+v: %v", l, err)
		}
		var back Limits
		if err := jsonx.UnmarshalStrict(out, &back); err != nil {
			t.Fatalf("decoding our own %s: %v", out, err)
		}
		if back.RPM != l.RPM || back.TPM != l.TPM || back.MaxParallel != l.MaxParallel ||
			back.BudgetUSD.Nano() != l.BudgetUSD.Nano() || (back.BudgetUSD == nil) != (l.BudgetUSD == nil) || back.BudgetPeriod != l.BudgetPeriod {
			t.Fatalf("%s came back as %+v from %+v", out, back, l)
		}
		if back.Validate() != nil {
			t.Fatalf("%s no longer validates", out)
		}
	})
}
