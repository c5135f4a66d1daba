package store

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Timings are request times (milliseconds) of a window's usage records:
// what the console's overview takes percentiles of.
type Timings struct {
	Latency, TTFB, Overhead []float64
}

// maxTimings bounds the records Timings reads: percentiles of the newest
// 50,000 requests describe a window well, at a bounded cost.
const maxTimings = 50_000

// Timings returns the timings of the newest usage records (at most
// 50,000) in [since, until), of keyID's records when it is set, each
// slice sorted.
func (s *Store) Timings(ctx context.Context, keyID string, since, until time.Time) (Timings, error) {
	scope, args := usageScope()
	where := []string{scope, "time >= ?", "time < ?"}
	args = append(args, since.UnixMilli(), until.UnixMilli())
	if keyID != "" {
		where = append(where, "key_id = ?")
		args = append(args, cleanText(keyID))
	}
	args = append(args, maxTimings)
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT latency_ms, ttfb_ms, overhead_ms FROM requests WHERE "+
		strings.Join(where, " AND ")+" ORDER BY time DESC LIMIT ?"), args...)
	if err != nil {
		return Timings{}, err
	}
	defer rows.Close()
	var t Timings
	for rows.Next() {
		var l, f, o float64
		if err := rows.Scan(&l, &f, &o); err != nil {
			return Timings{}, err
		}
		t.Latency, t.TTFB, t.Overhead = append(t.Latency, l), append(t.TTFB, f), append(t.Overhead, o)
	}
	slices.Sort(t.Latency)
	slices.Sort(t.TTFB)
	slices.Sort(t.Overhead)
	return t, rows.Err()
}

// Percentile is the p-th percentile (0 < p ≤ 1, nearest rank) of sorted
// values; 0 for none.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
