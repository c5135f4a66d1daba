package store

import (
	"context"
	"slices"
	"time"
)

// Timings are request times (milliseconds) of a window's usage records:
// what the console's overview takes percentiles of.
type Timings struct {
	Latency, TTFB, Overhead []float64
}

// Timings samples a window in timingSlices slices of equal length, the
// newest timingsPerSlice usage records of each: at most 4,800 records,
// spread over the whole window, read through the time (or key, time)
// index in short range scans. Reading every record of a busy window, or
// only its newest ones, would cost time that grows with the traffic, or
// describe only the window's last hour.
const (
	timingSlices    = 24
	timingsPerSlice = 200
)

// Timings returns request timings sampled across [since, until): per
// slice of the window the newest records (of keyID's records when it is
// set), each slice of the result sorted. A slice with few requests is
// sampled whole, so each slice of time weighs alike.
func (s *Store) Timings(ctx context.Context, keyID string, since, until time.Time) (Timings, error) {
	scope, scopeArgs := usageScope()
	where := scope + " AND time >= ? AND time < ?"
	if keyID != "" {
		where += " AND key_id = ?"
	}
	q := s.rebind("SELECT latency_ms, ttfb_ms, overhead_ms FROM requests WHERE " + where + " ORDER BY time DESC LIMIT ?")
	var t Timings
	from, span := since.UnixMilli(), until.UnixMilli()-since.UnixMilli()
	for i := range int64(timingSlices) {
		lo, hi := from+span*i/timingSlices, from+span*(i+1)/timingSlices
		if hi <= lo {
			continue
		}
		args := append(slices.Clip(scopeArgs), lo, hi)
		if keyID != "" {
			args = append(args, cleanText(keyID))
		}
		if err := s.readTimings(ctx, q, append(args, timingsPerSlice), &t); err != nil {
			return Timings{}, err
		}
	}
	slices.Sort(t.Latency)
	slices.Sort(t.TTFB)
	slices.Sort(t.Overhead)
	return t, nil
}

func (s *Store) readTimings(ctx context.Context, q string, args []any, t *Timings) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var l, f, o float64
		if err := rows.Scan(&l, &f, &o); err != nil {
			return err
		}
		t.Latency, t.TTFB, t.Overhead = append(t.Latency, l), append(t.TTFB, f), append(t.Overhead, o)
	}
	return rows.Err()
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
