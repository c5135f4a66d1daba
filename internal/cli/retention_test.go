package cli

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/config"
)

// database.ledger_retention reaches the store the gateway's ledger writes
// to, which deletes the older records while it runs (ledger.Retainer).
func TestLedgerRetentionReachesTheStore(t *testing.T) {
	for _, keep := range []time.Duration{0, 90 * 24 * time.Hour} {
		cfg := config.Default()
		cfg.Database.URL = "sqlite://" + filepath.Join(t.TempDir(), "t.db")
		cfg.Database.LedgerRetention = keep
		db, err := openDatabase(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := db.LedgerRetention(); got != keep {
			t.Errorf("ledger_retention %s: the store keeps records for %s", keep, got)
		}
		db.Close()
	}
}
