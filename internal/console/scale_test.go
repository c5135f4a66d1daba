package console

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// BenchmarkPagesAtScale measures the console's pages, data and HTML,
// over the ledger of the store's scale benchmarks (TOLLGATE_BENCH_RECORDS
// records over 90 days, 1,000 keys, 30 models; skipped when unset), as
// the master key sees them. The clock moves back by 37 minutes and some
// seconds between runs, so the windows' edges (read from records) vary;
// p50 and p95 are reported.
//
//	TOLLGATE_BENCH_RECORDS=10000000 TOLLGATE_BENCH_DIR=/var/tmp go test ./internal/console -run '^$' -bench PagesAtScale -benchtime 40x
func BenchmarkPagesAtScale(b *testing.B) {
	storetest.ForScale(b, func(b *testing.B, s *store.Store) {
		rt := &route.Table{}
		now := storetest.ScaleEnd
		c, err := New(Options{
			Admin:  func() *admin.Service { return admin.New(s, rt, nil, nil) },
			Store:  s,
			Routes: func() *route.Table { return rt },
			Now:    func() time.Time { return now },
		})
		if err != nil {
			b.Fatal(err)
		}
		master := &viewer{Master: true}
		key := &viewer{KeyID: "key_42", KeyName: "key 42"}
		for _, p := range []struct {
			name string
			path string
			v    *viewer
			page func(http.ResponseWriter, *http.Request, *viewer)
		}{
			{"overview/30d", "/console/overview?window=30d", master, c.overview},
			{"overview/24h", "/console/overview?window=24h", master, c.overview},
			{"overview/7d/key", "/console/overview?window=7d", key, c.overview},
			{"requests/first", "/console/requests", master, c.requests},
			{"requests/key", "/console/requests?key=key_42", master, c.requests},
			{"requests/model+status", "/console/requests?model=model-7&status=429", master, c.requests},
			{"requests/lane=none", "/console/requests?lane=none", master, c.requests},
			{"usage/30d/model", "/console/usage?since=30d&by=model", master, c.usage},
			{"usage/30d/key", "/console/usage?since=30d&by=key", master, c.usage},
		} {
			b.Run(p.name, func(b *testing.B) {
				var took []time.Duration
				size := 0
				for b.Loop() {
					now = storetest.ScaleEnd.Add(-time.Duration(len(took)) * (37*time.Minute + 13*time.Second + 7*time.Millisecond))
					w := httptest.NewRecorder()
					start := time.Now()
					p.page(w, httptest.NewRequest("GET", p.path, nil), p.v)
					took = append(took, time.Since(start))
					if w.Code != http.StatusOK {
						b.Fatalf("%s: %d\n%s", p.path, w.Code, w.Body)
					}
					size = w.Body.Len()
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
				b.ReportMetric(float64(size), "html-bytes")
			})
		}
	})
}
