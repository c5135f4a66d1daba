// Package gatewaytest runs the whole gateway in process for tests that
// drive it from outside: official SDKs, real CLIs.
package gatewaytest

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/store"
)

// Start builds the gateway from a YAML configuration (no environment
// variables are read), serves it on a loopback listener and returns its
// URL. masterKey is the only client key. The gateway's log is printed
// when the test fails.
func Start(t testing.TB, yaml, masterKey string) string {
	t.Helper()
	url, _ := start(t, yaml, masterKey, nil)
	return url
}

// StartWithLog is Start, with the gateway's log for the test to read.
func StartWithLog(t testing.TB, yaml, masterKey string) (string, *LogBuffer) {
	t.Helper()
	return start(t, yaml, masterKey, nil)
}

// StartDB is Start with an embedded SQLite database (in a temporary
// directory): virtual keys, the admin API, the console, stored responses
// and the usage ledger.
func StartDB(t testing.TB, yaml, masterKey string) string {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "tollgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	url, _ := start(t, yaml, masterKey, db)
	return url
}

func start(t testing.TB, yaml, masterKey string, db *store.Store) (string, *LogBuffer) {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, yaml)
	}
	logs := new(LogBuffer)
	o := cli.Options{MasterKey: masterKey, Logger: slog.New(slog.NewTextHandler(logs, nil)), Store: db}
	var rec *ledger.Recorder
	if db != nil {
		// Synchronous: a request's record is in the database when its
		// answer ends, so tests can look for it at once.
		var err error
		if rec, err = ledger.New(db, ledger.Options{Sync: true, SpillPath: filepath.Join(t.TempDir(), "spill")}); err != nil {
			t.Fatal(err)
		}
		o.Ledger = rec
	}
	built, err := cli.Build(cfg, o)
	if err != nil {
		t.Fatalf("cli.Build: %v", err)
	}
	srv := httptest.NewServer(built.Handler)
	t.Cleanup(func() {
		srv.Close() // waits for in-flight handlers, so the log is complete
		built.Close()
		if rec != nil {
			rec.Close(context.Background())
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	return srv.URL, logs
}

// LogBuffer is a bytes.Buffer safe for the gateway's concurrent logging.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *LogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *LogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
