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
	url, _ := start(t, yaml, masterKey, OpenDB(t))
	return url
}

// OpenDB opens an embedded SQLite database in a temporary directory,
// migrated, closed when the test ends.
func OpenDB(t testing.TB) *store.Store {
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
	return db
}

// StartAt is StartWithLog for a configuration that names the gateway's
// own URL (identity.public_url): yamlAt gets the URL the gateway will be
// served at. o gives the master key, the database (nil: none) and the
// clock; the logger and the ledger are the test's.
func StartAt(t testing.TB, yamlAt func(url string) string, o cli.Options) (string, *LogBuffer) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	url := "http://" + srv.Listener.Addr().String()
	return serve(t, srv, yamlAt(url), o)
}

func start(t testing.TB, yaml, masterKey string, db *store.Store) (string, *LogBuffer) {
	t.Helper()
	return serve(t, httptest.NewUnstartedServer(nil), yaml, cli.Options{MasterKey: masterKey, Store: db})
}

func serve(t testing.TB, srv *httptest.Server, yaml string, o cli.Options) (string, *LogBuffer) {
	t.Helper()
	db := o.Store
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, yaml)
	}
	logs := new(LogBuffer)
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
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
		srv.Close()
		t.Fatalf("cli.Build: %v", err)
	}
	srv.Config.Handler = built.Handler
	srv.Start()
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
