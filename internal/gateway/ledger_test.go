package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// ledgerDB is a migrated SQLite database (closed when the test ends) and
// a recorder writing to it every 10 ms.
func ledgerDB(t *testing.T) (*store.Store, *ledger.Recorder) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := ledger.New(db, ledger.Options{FlushInterval: 10 * time.Millisecond, SpillPath: filepath.Join(t.TempDir(), "spill")})
	if err != nil {
		t.Fatal(err)
	}
	return db, rec
}

// echoLedgerGateway is a gateway serving the echo model, with virtual
// keys in a migrated SQLite database and a recorder writing its ledger
// there; it logs to logger.
func echoLedgerGateway(t *testing.T, logger *slog.Logger) (http.Handler, *store.Store, *ledger.Recorder) {
	t.Helper()
	db, rec := ledgerDB(t)
	cfg, err := config.Parse([]byte(`
providers: [ { name: demo, type: echo } ]
models: [ { name: echo, targets: [ { provider: demo } ] } ]
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Store: db, Logger: logger, Ledger: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(built.Close)
	return built.Handler, db, rec
}

// A stream cut by the upstream and a client that leaves mid-stream each
// leave exactly one record, with the usage seen so far.
func TestLedgerRecordsFailuresOnce(t *testing.T) {
	ctx := context.Background()
	db, rec := ledgerDB(t)

	events := upstreamtest.Events("anthropic_stream.sse")
	up := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		if strings.Contains(string(r.Body), "hang") {
			return upstreamtest.Reply{Events: events[:3], Hang: true}
		}
		return upstreamtest.Reply{Events: events[:5], Cut: true}
	})
	defer up.Close()
	cfg, err := config.Parse([]byte(`
providers: [ { name: ant, type: anthropic, base_url: "`+up.URL+`", api_key: k } ]
models: [ { name: claude, targets: [ { provider: ant, model: claude-x } ], pricing: { input: "3", output: "15", cache_read: "0.30", cache_write_5m: "3.75", cache_write_1h: "6" } } ]
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.DiscardHandler), Ledger: rec})
	if err != nil {
		t.Fatal(err)
	}
	h, closeIdle := built.Handler, built.Close
	defer closeIdle()
	gw := httptest.NewServer(h)
	defer gw.Close()

	send := func(content string, leave bool) string {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", gw.URL+"/v1/messages",
			strings.NewReader(`{"model":"claude","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"`+content+`"}]}`))
		req.Header.Set("x-api-key", masterKey)
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		id := resp.Header.Get("Tollgate-Request-Id")
		if leave {
			buf := make([]byte, 64)
			resp.Body.Read(buf)
			cancel()
			<-up.ClientGone()
		} else {
			readAll(t, resp.Body)
		}
		resp.Body.Close()
		return id
	}
	cut := send("cut", false)
	left := send("hang", true)

	deadline := time.Now().Add(10 * time.Second)
	var byID map[string]store.Request
	for {
		recs, err := db.Requests(ctx, store.RequestFilter{})
		if err != nil {
			t.Fatal(err)
		}
		byID = map[string]store.Request{}
		for _, r := range recs {
			byID[r.ID] = r
		}
		if len(byID) == 2 || time.Now().After(deadline) {
			if len(recs) != 2 {
				t.Fatalf("%d records, want exactly 2", len(recs))
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	rec.Close(ctx)
	c := byID[cut]
	if c.ErrorType != "stream_interrupted" || c.Input != 472 || c.CacheRead != 3000 || c.CostNanoUSD == nil || *c.CostNanoUSD == 0 {
		t.Errorf("cut stream record: %+v", c)
	}
	l := byID[left]
	if l.ErrorType != "client_disconnected" || l.Input != 472 {
		t.Errorf("client-gone record: %+v", l)
	}
}
