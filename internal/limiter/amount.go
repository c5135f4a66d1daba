package limiter

import "math"

// maxAmount bounds every amount the counters take, hold or add up: tokens,
// nano-USD, window sums. It is 2^53, up to which the numbers of Redis's Lua
// (doubles) are exact. Every valid limit is far below it (tpm at most 2^40,
// budgets at most limit.MaxBudgetUSD), so an amount cut down to it is still more
// than any limit: the request is refused as too large, whatever it asked.
const maxAmount = 1 << 53

// reserved is an amount a request asks to reserve, made safe to count:
// past maxAmount it is maxAmount, and so is a negative amount, which only
// an overflowed sum gives and which must not pass for a small one.
func reserved(n int64) int64 {
	if n < 0 || n > maxAmount {
		return maxAmount
	}
	return n
}

// clampAmount cuts n to [0, maxAmount]: usage (negative usage counts as
// none), ledger totals, and counters after an addition.
func clampAmount(n int64) int64 { return min(max(n, 0), maxAmount) }

// addAmounts is a+b cut to [0, maxAmount], for any a and b.
func addAmounts(a, b int64) int64 { return clampAmount(satAdd(a, b)) }

// satAdd is a+b, saturating at the ends of int64 instead of wrapping.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}
