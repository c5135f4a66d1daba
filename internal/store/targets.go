package store

import (
	"context"
	"time"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// TargetCount is how many upstream attempts went to one target
// (provider/model) and how many of them failed.
type TargetCount struct {
	Attempts, Failures int64
}

// maxRetriedRecords bounds the records with more than one attempt that
// TargetAttempts reads one by one (the newest of the window): on a
// healthy gateway they are few, and a target that fails them all shows
// as failing long before this many.
const maxRetriedRecords = 10_000

// TargetAttempts counts the upstream attempts of [since, until) per
// target: each attempt on the target it went to, so a target that failed
// before another answered counts that failure, rather than the request
// counting only for the target that answered. A record with one attempt
// is counted in SQL, as a failure when it ended with an error; the
// records with more are read and their attempts counted one by one (a
// failure: an error, or an upstream status of 400 or more).
func (s *Store) TargetAttempts(ctx context.Context, since, until time.Time) (map[string]TargetCount, error) {
	out := map[string]TargetCount{}
	retried := "attempts LIKE '%},{%'" // more than one attempt object
	scope, scopeArgs := usageScope()
	args := append([]any{since.UnixMilli(), until.UnixMilli()}, scopeArgs...)
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT provider, upstream_model, COUNT(*), "+
		"SUM(CASE WHEN status >= 400 OR error_type <> '' THEN 1 ELSE 0 END) FROM requests "+
		"WHERE time >= ? AND time < ? AND "+scope+" AND provider <> '' AND NOT ("+retried+") GROUP BY provider, upstream_model"), args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p, m string
		var c TargetCount
		if err := rows.Scan(&p, &m, &c.Attempts, &c.Failures); err != nil {
			rows.Close()
			return nil, err
		}
		t := out[p+"/"+m]
		t.Attempts += c.Attempts
		t.Failures += c.Failures
		out[p+"/"+m] = t
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = s.db.QueryContext(ctx, s.rebind("SELECT attempts FROM requests WHERE time >= ? AND time < ? AND "+scope+
		" AND "+retried+" ORDER BY time DESC LIMIT ?"), append(args, maxRetriedRecords)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []struct {
		Target string `json:"target"`
		Status int    `json:"status"`
		Error  string `json:"error"`
	}
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return nil, err
		}
		list = list[:0]
		if jsonx.Unmarshal([]byte(js), &list) != nil {
			continue // cut or damaged: sanitised records are arrays, but never trust a row
		}
		for _, a := range list {
			if a.Target == "" {
				continue
			}
			t := out[a.Target]
			t.Attempts++
			if a.Error != "" || a.Status >= 400 {
				t.Failures++
			}
			out[a.Target] = t
		}
	}
	return out, rows.Err()
}
