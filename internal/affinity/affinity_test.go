package affinity

import (
	"fmt"
	"math"
	"testing"
)

// best returns the index of the highest-scoring candidate.
func best(k Key, ids []uint64, weights []int, skip int) int {
	b, bs := -1, -1.0
	for i, id := range ids {
		if i == skip {
			continue
		}
		if s := Score(k, id, weights[i]); s > bs {
			b, bs = i, s
		}
	}
	return b
}

// Over many conversations each candidate's share stays within 5% of its
// weight's (here within 1.5 points of the share, for 200,000 keys).
func TestScoreShares(t *testing.T) {
	for _, weights := range [][]int{{1, 1}, {1, 1, 1}, {3, 1}, {5, 3, 2}, {1, 9}} {
		ids := make([]uint64, len(weights))
		total := 0
		for i, w := range weights {
			ids[i] = ID(fmt.Sprintf("p%d/model", i))
			total += w
		}
		const n = 200000
		wins := make([]int, len(weights))
		for k := 1; k <= n; k++ {
			wins[best(Of("t", fmt.Append(nil, k)), ids, weights, -1)]++
		}
		for i, w := range weights {
			want := float64(w) / float64(total)
			got := float64(wins[i]) / n
			if math.Abs(got-want) > 0.05*want {
				t.Errorf("weights %v: candidate %d won %.4f, want %.4f ±5%%", weights, i, got, want)
			}
		}
	}
}

// Taking a candidate away moves only the keys it won; the others stay.
func TestScoreMovesOnlyTheLostCandidatesKeys(t *testing.T) {
	weights := []int{2, 1, 1, 1}
	ids := []uint64{ID("a"), ID("b"), ID("c"), ID("d")}
	moved, held := 0, 0
	for k := 1; k <= 20000; k++ {
		key := Of("t", fmt.Append(nil, k))
		before, after := best(key, ids, weights, -1), best(key, ids, weights, 2)
		if before == 2 {
			held++
			continue
		}
		if before != after {
			moved++
		}
	}
	if moved != 0 || held == 0 {
		t.Errorf("%d keys moved that the lost candidate did not hold (it held %d)", moved, held)
	}
}

func TestKey(t *testing.T) {
	a := NewHash("p")
	a.Add([]byte("ab"))
	a.Add([]byte("c"))
	b := NewHash("p")
	b.Add([]byte("a"))
	b.Add([]byte("bc"))
	if a.Key() == b.Key() {
		t.Error("parts run into each other")
	}
	if Of("user", []byte("x")) == Of("prompt_cache_key", []byte("x")) {
		t.Error("sources are not told apart")
	}
	if Of("u", []byte("x")) != Of("u", []byte("x")) || Of("u", nil) == 0 {
		t.Error("keys are not stable, or zero")
	}
	if got := Key(0xabc).Hex(); got != "0000000000000abc" {
		t.Errorf("Hex: %s", got)
	}
}

func BenchmarkHash100KB(b *testing.B) {
	part := make([]byte, 30<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(part)))
	for b.Loop() {
		h := NewHash("prompt")
		h.Add(part)
		_ = h.Key()
	}
}

// A conversation's key within one tenant is the same on every request;
// two tenants with the same conversation get unrelated keys, and so rank
// the candidates independently: over many conversations they agree on
// the first about as often as chance would have it (1 in 3 here), not
// always.
func TestWithinTenants(t *testing.T) {
	if k := Key(0).Within("key:a"); k != 0 {
		t.Errorf("no conversation within a tenant is %x, want 0", k)
	}
	ids := []uint64{ID("p0/model"), ID("p1/model"), ID("p2/model")}
	weights := []int{1, 1, 1}
	const n = 3000
	same := 0
	for i := range n {
		k := Of("prompt", fmt.Append(nil, "the same prompt ", i))
		a, b := k.Within("key:a"), k.Within("key:b")
		if a == b || a == k || b == k {
			t.Fatalf("conversation %d: %x within a, %x within b, %x unscoped", i, a, b, k)
		}
		if again := k.Within("key:a"); again != a {
			t.Fatalf("conversation %d: within a %x, then %x", i, a, again)
		}
		if best(a, ids, weights, -1) == best(b, ids, weights, -1) {
			same++
		}
	}
	if share := float64(same) / n; share < 0.28 || share > 0.39 {
		t.Errorf("two tenants chose the same first candidate for %.1f%% of %d conversations, want about 33%%", 100*share, n)
	}
}
