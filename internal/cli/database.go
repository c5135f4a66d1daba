package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
)

// sqlitePath is the file of a sqlite:// database URL.
func sqlitePath(url string) (string, bool) {
	p, ok := strings.CutPrefix(url, "sqlite://")
	return p, ok && p != ""
}

// openDatabase opens the configured database and applies migrations,
// creating an SQLite file that does not exist yet: what serve and migrate
// do.
func openDatabase(cfg *config.Config) (*store.Store, error) {
	db, _, err := openDatabaseReport(cfg)
	return db, err
}

// openDatabaseReport is openDatabase that also returns the migrations it
// applied.
func openDatabaseReport(cfg *config.Config) (*store.Store, []string, error) {
	if cfg.Database.URL == config.NoDatabase {
		return nil, nil, errors.New("the configuration has no database (database.url: none)")
	}
	if path, ok := sqlitePath(cfg.Database.URL); ok {
		dir := filepath.Dir(path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, nil, fmt.Errorf("database.url %s: the directory %s does not exist; create it or choose another path", cfg.Database.URL, dir)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := store.Open(ctx, cfg.Database.URL)
	if err != nil {
		return nil, nil, scrubError(secretReplacer(cfg), fmt.Errorf("database %s: %w", config.RedactURL(cfg.Database.URL), err))
	}
	applied, err := db.MigrateReport(ctx)
	if err != nil {
		db.Close()
		return nil, nil, scrubError(secretReplacer(cfg), err)
	}
	// Only carried: the ledger.Recorder that serve starts on db deletes
	// the older records; commands that open the database do not.
	db.SetLedgerRetention(cfg.Database.LedgerRetention)
	return db, applied, nil
}

// openExistingDatabase is openDatabase for the commands that read or
// change a gateway's keys and usage: they never create an SQLite file, for
// a new empty database next to the wrong working directory would take keys
// no running gateway knows.
func openExistingDatabase(cfg *config.Config, configFile string) (*store.Store, error) {
	if path, ok := sqlitePath(cfg.Database.URL); ok {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			abs, _ := filepath.Abs(path)
			from := "the default, as neither --config nor $TOLLGATE_CONFIG is given"
			if configFile != "" {
				from = "database.url in " + configFile
			}
			return nil, fmt.Errorf("no database at %s (%s): run this command in the gateway's working directory, or point at its database with --config FILE, or at the running gateway with --url URL --admin-key KEY", abs, from)
		}
	}
	return openDatabase(cfg)
}
