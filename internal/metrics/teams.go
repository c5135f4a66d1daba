package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// maxTeamLabels bounds the team label: the first teams seen get their own
// series, any further one counts as "other", so that teams made through
// the admin API cannot grow a scrape without limit.
const maxTeamLabels = 100

// teams counts requests, tokens and cost by team.
type teams struct {
	requests *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	cost     *prometheus.CounterVec

	mu   sync.Mutex
	seen map[string]struct{}
}

func newTeams() *teams {
	return &teams{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_team_requests_total",
			Help: "Requests of signed-in people and user-owned keys, by team (none: in no team; other: past the first 100 teams) and status class."}, []string{"team", "class"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_team_tokens_total",
			Help: "Tokens by team and bucket (input, cache_read, cache_write, output)."}, []string{"team", "bucket"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_team_cost_usd_total",
			Help: "Cost of priced requests by team, in USD."}, []string{"team"}),
		seen: map[string]struct{}{},
	}
}

// label is the team's label value.
func (t *teams) label(team string) string {
	if team == "" {
		return "none"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.seen[team]; ok {
		return team
	}
	if len(t.seen) >= maxTeamLabels {
		return "other"
	}
	t.seen[team] = struct{}{}
	return team
}

var classText = [...]string{"0xx", "1xx", "2xx", "3xx", "4xx", "5xx"}

func (t *teams) observe(q *Request) {
	team := t.label(q.Team)
	class := "0xx"
	if c := q.Status / 100; c > 0 && c < len(classText) {
		class = classText[c]
	}
	t.requests.WithLabelValues(team, class).Inc()
	for _, b := range [...]struct {
		name string
		n    int64
	}{{"input", q.Input}, {"cache_read", q.CacheRead}, {"cache_write", q.CacheWrite}, {"output", q.Output}} {
		if b.n > 0 {
			t.tokens.WithLabelValues(team, b.name).Add(float64(b.n))
		}
	}
	if q.CostKnown && q.CostNano > 0 {
		t.cost.WithLabelValues(team).Add(float64(q.CostNano) / 1e9)
	}
}
