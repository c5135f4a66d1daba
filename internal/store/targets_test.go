package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// Every attempt counts on the target it went to: a primary that failed
// before the fallback answered shows its failures, not "no requests".
func TestTargetAttempts(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for name, s := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			rec := func(id string, at time.Time, provider, model string, status int, attempts string) store.Request {
				return store.Request{ID: id, Time: at, ClientProtocol: "openai", Endpoint: "/v1/chat/completions", Model: "m",
					CanonicalModel: "m", Provider: provider, UpstreamModel: model, Lane: "passthrough", Status: status, Attempts: attempts}
			}
			var recs []store.Request
			for i := range 3 { // the primary refused, the fallback answered
				recs = append(recs, rec(fmt.Sprintf("req_r%d", i), now.Add(-10*time.Minute), "backup", "m2", 200,
					`[{"target":"primary/m1","status":0,"error":"connection refused","ms":1},{"target":"backup/m2","status":200,"error":"","ms":5}]`))
			}
			recs = append(recs,
				rec("req_ok", now.Add(-5*time.Minute), "backup", "m2", 200, `[{"target":"backup/m2","status":200,"error":"","ms":5}]`),
				rec("req_bad", now.Add(-5*time.Minute), "primary", "m1", 502, `[{"target":"primary/m1","status":502,"error":"bad gateway","ms":5}]`),
				rec("req_old", now.Add(-2*time.Hour), "primary", "m1", 502, `[{"target":"primary/m1","status":502,"error":"bad gateway","ms":5}]`),
				// A cut list's closing summary has no target.
				rec("req_cut", now.Add(-time.Minute), "backup", "m2", 200,
					`[{"target":"primary/m1","status":503,"error":"overloaded","ms":1},{"target":"","status":0,"error":"… 4 more attempts not recorded","ms":0}]`))
			if err := s.InsertRequests(context.Background(), recs); err != nil {
				t.Fatal(err)
			}
			got, err := s.TargetAttempts(context.Background(), now.Add(-time.Hour), now)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]store.TargetCount{"primary/m1": {Attempts: 5, Failures: 5}, "backup/m2": {Attempts: 4, Failures: 0}}
			if len(got) != len(want) || got["primary/m1"] != want["primary/m1"] || got["backup/m2"] != want["backup/m2"] {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}
