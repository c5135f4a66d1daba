package route

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/breaker"
)

// stickyModel has one priority of targets with the given weights, and a
// fallback.
func stickyModel(weights ...int) *Model {
	m := &Model{Name: "m", MaxAttempts: 3, RetryDeadline: time.Minute, Sticky: true}
	for i, w := range weights {
		name := fmt.Sprintf("p%d/model", i)
		m.Targets = append(m.Targets, Target{Name: name, Weight: w, id: affinity.ID(name + "#0"),
			Breaker: breaker.New(breaker.Settings{Failures: 1, Cooldown: time.Hour})})
	}
	m.Targets = append(m.Targets, Target{Name: "fallback/model", Weight: 1, Priority: fallbackPriority, id: affinity.ID("fallback/model#0"),
		Breaker: breaker.New(breaker.Settings{Failures: 1, Cooldown: time.Hour})})
	m.tiers = tiers(m.Targets)
	return m
}

func conversation(i int) affinity.Key {
	return affinity.Of("prompt_cache_key", fmt.Append(nil, "conv-", i))
}

// Across many conversations each target's share stays within ±5% of its
// weight's; the fallback comes last in every plan.
func TestPlanForShares(t *testing.T) {
	for _, weights := range [][]int{{1, 1}, {3, 1}, {5, 3, 2}} {
		m := stickyModel(weights...)
		total := 0
		for _, w := range weights {
			total += w
		}
		const n = 100000
		firsts := map[string]int{}
		for i := range n {
			plan := m.PlanFor(conversation(i))
			if plan[len(plan)-1].Name != "fallback/model" {
				t.Fatalf("fallback not last: %v", plan)
			}
			firsts[plan[0].Name]++
		}
		for i, w := range weights {
			want := float64(w) / float64(total)
			got := float64(firsts[fmt.Sprintf("p%d/model", i)]) / n
			if math.Abs(got-want) > 0.05*want {
				t.Errorf("weights %v: target %d got %.4f of conversations, want %.4f ±5%%", weights, i, got, want)
			}
		}
	}
}

// A conversation's plan is the same on every request (and replica); an
// open breaker moves only the conversations of its target, each to its
// own next-ranked target, and they stay there while it is open.
func TestPlanForSticky(t *testing.T) {
	m := stickyModel(1, 1, 1)
	first := func(k affinity.Key) string {
		pk := m.Pick(time.Unix(1000, 0), k)
		tg, _, ok := pk.Next()
		if !ok {
			t.Fatal("no target")
		}
		pk.Done(breaker.Success, 0)
		return tg.Name
	}
	before := map[int]string{}
	for i := range 300 {
		before[i] = first(conversation(i))
		if again := first(conversation(i)); again != before[i] {
			t.Fatalf("conversation %d went to %s, then %s", i, before[i], again)
		}
	}
	m.Targets[1].Breaker.Done(breaker.Failure) // p1 opens
	moved := map[string]int{}
	for i := range 300 {
		now := first(conversation(i))
		switch {
		case before[i] == "p1/model" && now == "p1/model":
			t.Fatalf("conversation %d stayed on the open target", i)
		case before[i] == "p1/model":
			if want := m.PlanFor(conversation(i))[1].Name; now != want {
				t.Errorf("conversation %d moved to %s, not its second-ranked %s", i, now, want)
			}
			moved[now]++
		case now != before[i]:
			t.Errorf("conversation %d moved from %s to %s, though its target is healthy", i, before[i], now)
		}
	}
	if moved["p0/model"] == 0 || moved["p2/model"] == 0 {
		t.Errorf("the open target's conversations did not spread over the others: %v", moved)
	}
	// Without a key, or on a model that is not sticky, plans are drawn.
	m.Sticky = false
	seen := map[string]bool{}
	for range 200 {
		seen[m.PlanFor(conversation(1))[0].Name] = true
	}
	if len(seen) < 3 {
		t.Errorf("a model that is not sticky still routes one conversation to %v", seen)
	}
}

func BenchmarkPlanFor(b *testing.B) {
	m := stickyModel(1, 1)
	k := conversation(7)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.PlanFor(k)
	}
}
