package cli

import (
	"context"
	"net/http"
	"time"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limiter"
	"github.com/tollgate/tollgate/internal/store"
)

// readyHandler serves GET /readyz: 200 when the database (and Redis, when
// limits live there) answer and the usage ledger keeps up, else 503 naming
// what does not. /healthz stays liveness only: a replica whose database is
// away is alive, not ready. ledger may be nil.
func readyHandler(db *store.Store, limiter *limiter.Limiter, ledger interface{ Healthy() error }) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		checks := map[string]string{}
		ready := true
		check := func(name string, err error) {
			if err != nil {
				checks[name], ready = err.Error(), false
			} else {
				checks[name] = "ok"
			}
		}
		if db != nil {
			check("database", db.Ping(ctx))
		}
		if limiter != nil {
			check("limits", limiter.Ping(ctx))
		}
		if ledger != nil {
			// Records waiting with nothing written (a database that refuses
			// or hangs), or a backlog past the memory buffer.
			check("ledger", ledger.Healthy())
		}
		status, word := http.StatusOK, "ready"
		if !ready {
			status, word = http.StatusServiceUnavailable, "not ready"
		}
		b, _ := jsonx.Marshal(map[string]any{"status": word, "checks": checks})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		w.Write(append(b, '\n'))
	})
}
