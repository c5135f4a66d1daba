package cli_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/store"
)

// away is a database that does not take writes.
type away struct{}

func (away) InsertRequests(context.Context, []store.Request) error {
	return errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
}

// /readyz reports a ledger that has stopped writing, so that a load
// balancer stops sending requests whose usage would not be recorded; the
// metrics count the records the database refused.
func TestReadyReportsAStalledLedger(t *testing.T) {
	cfg, err := config.Parse([]byte(securityYAML), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ledger.New(away{}, ledger.Options{FlushInterval: 10 * time.Millisecond, StallAfter: 50 * time.Millisecond,
		SpillPath: filepath.Join(t.TempDir(), "spill")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		rec.Close(ctx)
	})
	built, err := cli.Build(cfg, cli.Options{MasterKey: testMaster, Logger: slog.New(slog.DiscardHandler), Ledger: rec})
	if err != nil {
		t.Fatal(err)
	}
	h, closeAll := built.Handler, built.Close
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); closeAll() })

	if resp, body := get(t, srv.URL+"/readyz"); resp.StatusCode != 200 {
		t.Fatalf("/readyz before any record: %d %s", resp.StatusCode, body)
	}
	if resp, body := postJSON(t, srv.URL+"/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"hi"}]}`, testMaster); resp.StatusCode != 200 {
		t.Fatalf("request: %d %s", resp.StatusCode, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body := get(t, srv.URL+"/readyz")
		if resp.StatusCode == 503 && strings.Contains(body, `"ledger":"ledger: nothing written`) && strings.Contains(body, "connection refused") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz with a stalled ledger: %d %s", resp.StatusCode, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, body := get(t, srv.URL+"/metrics", "Authorization: Bearer "+testMaster)
	for _, want := range []string{"tollgate_ledger_rejected_records_total 0", "tollgate_ledger_queue_depth 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
