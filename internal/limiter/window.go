package limiter

import "github.com/tollgate/tollgate/internal/limit"

// A sliding window is a map from slot index (time / slot width) to the
// amount counted in that slot. At slot cur, the slots after cur-keepSlots
// count; an amount therefore leaves between limit.WindowSlots and limit.WindowSlots+1
// slots after it was counted, never early. The Lua scripts in redis.go
// implement the same arithmetic; keep them in step.

// keepSlots is how many slots, the current one included, are counted.
const keepSlots = limit.WindowSlots + 1

// windowSum drops expired slots from w and returns the amount counted (at
// most maxAmount) and the newest slot holding any (or -1).
func windowSum(w map[int64]int64, cur int64) (sum, newest int64) {
	newest = -1
	for s, v := range w {
		if s <= cur-keepSlots {
			delete(w, s)
			continue
		}
		sum = addAmounts(sum, v)
		if v > 0 && s > newest {
			newest = s
		}
	}
	return sum, newest
}

// windowRetry returns the unix ms at which enough will have left the
// window for amount to fit under limit, or 0 if it never will.
func windowRetry(w map[int64]int64, cur, slotMS, sum, amount, limit int64) int64 {
	if amount > limit {
		return 0
	}
	// Slots leave in index order; walk them oldest first.
	for s := cur - keepSlots + 1; s <= cur; s++ {
		sum -= w[s]
		if sum+amount <= limit {
			return (s + keepSlots) * slotMS
		}
	}
	return (cur + keepSlots) * slotMS
}

// windowReset is when a window whose newest counted slot is newest is
// empty again (0 when it already is).
func windowReset(newest, slotMS int64) int64 {
	if newest < 0 {
		return 0
	}
	return (newest + keepSlots) * slotMS
}
