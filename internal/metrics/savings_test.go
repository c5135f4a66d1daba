package metrics

import "testing"

// The cache counters add each request's gross saving and premium by
// model; the net saving is the first less the second. Nothing is added
// for a request without them (none, or unknown: 0).
func TestCacheSavingsCounters(t *testing.T) {
	r := New()
	m := r.Requests()
	for _, q := range []Request{
		{Model: "m", Provider: "p", Status: 200, CacheRead: 1000, CacheSavingsNano: 2_700_000},
		{Model: "m", Provider: "p", Status: 200, CacheWrite: 1000, CacheWritePremiumNano: 750_000},
		{Model: "m", Provider: "p", Status: 200, CacheRead: 10, CacheWrite: 10, CacheSavingsNano: 27_000, CacheWritePremiumNano: 7_500},
		{Model: "n", Provider: "p", Status: 200, Input: 10},     // nothing cached
		{Model: "u", Provider: "p", Status: 200, CacheRead: 10}, // unpriced: unknown
	} {
		m.Observe(q)
	}
	families, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			if c := mt.GetCounter(); c != nil && (f.GetName() == "tollgate_cache_savings_nano_usd_total" ||
				f.GetName() == "tollgate_cache_write_premium_nano_usd_total") {
				got[f.GetName()+"/"+mt.GetLabel()[0].GetValue()] = c.GetValue()
			}
		}
	}
	want := map[string]float64{
		"tollgate_cache_savings_nano_usd_total/m":       2_727_000,
		"tollgate_cache_write_premium_nano_usd_total/m": 757_500,
	}
	if len(got) != len(want) {
		t.Errorf("counters %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
