package gateway_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
)

// TestClientLeavingDuringAuthentication: a client that leaves (an HTTP/2
// stream reset) while its virtual key is read from the database is
// recorded as gone, with no status and no key, not as a 503 of an
// unreachable database, and nothing is written to it.
func TestClientLeavingDuringAuthentication(t *testing.T) {
	ctx := context.Background()
	logs := &syncBuffer{}
	h, db, rec := echoLedgerGateway(t, slog.New(slog.NewJSONHandler(logs, nil)))

	gone, leave := context.WithCancel(ctx)
	leave() // the key is read with the request's context, which has ended
	r := httptest.NewRequestWithContext(gone, "POST", "/v1/messages",
		strings.NewReader(`{"model":"echo","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	r.Header.Set("x-api-key", auth.SecretPrefix+"0123456789abcdefghijklmnopqrstuv")
	r.Header.Set("anthropic-version", "2023-06-01")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Body.Len() != 0 {
		t.Errorf("answered %d %s to a client that left", w.Code, w.Body)
	}
	rec.Close(ctx)
	recs, err := db.Requests(ctx, store.RequestFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	if got := recs[0]; got.Status != 0 || got.ErrorType != "client_disconnected" || got.KeyID != outcome.Unauthenticated {
		t.Errorf("recorded status %d, error type %q, key %q; want 0, client_disconnected, %q", got.Status, got.ErrorType, got.KeyID, outcome.Unauthenticated)
	}
	if strings.Contains(logs.String(), "unreachable") {
		t.Errorf("logged as a database failure:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"client_gone":true`) {
		t.Errorf("the request's line does not say the client left:\n%s", logs.String())
	}
}
