package cli

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"

	"github.com/tollgate/tollgate/internal/config"
)

// backup copies the SQLite database with SQLite's online backup API: a
// consistent copy taken while the gateway runs (in WAL mode its writers
// go on meanwhile), which a plain cp of the file and its -wal is not.
func backup(args []string, stdout io.Writer) error {
	fs := newFlagSet("backup", stdout)
	cfgFlag := fs.String("config", "", "configuration file whose database to copy (default $TOLLGATE_CONFIG; none: sqlite://tollgate.db)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(fs, "want one argument, the file to write the copy to")
	}
	dest := fs.Arg(0)
	cfg, _, err := loadDatabaseConfig(*cfgFlag)
	if err != nil {
		return err
	}
	src, ok := sqlitePath(cfg.Database.URL)
	if !ok {
		return fmt.Errorf("database %s is not SQLite: back PostgreSQL up with pg_dump (see the README)", config.RedactURL(cfg.Database.URL))
	}
	pages, err := backupSQLite(context.Background(), src, dest)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "copied %s to %s (%d pages)\n", src, dest, pages)
	return nil
}

// backupSQLite copies the database file src to dest, which must not exist:
// into a temporary file beside dest, checked, then renamed, so that dest
// is never a partial copy. It returns the number of pages copied.
func backupSQLite(ctx context.Context, src, dest string) (int, error) {
	if _, err := os.Stat(src); err != nil {
		return 0, fmt.Errorf("database: %w", err)
	}
	if _, err := os.Lstat(dest); err == nil {
		return 0, fmt.Errorf("%s exists: give a new file", dest)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*")
	if err != nil {
		return 0, err
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer func() { // gone after the rename; removed on any failure
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(tmpPath + suffix)
		}
	}()

	db, err := sql.Open("sqlite", sqliteFileURI(src, "mode=ro&_pragma=busy_timeout(10000)"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("database %s: %w", src, err)
	}
	defer conn.Close()
	var pages int
	err = conn.Raw(func(dc any) error {
		b, ok := dc.(interface {
			NewBackup(string) (*sqlite.Backup, error)
		})
		if !ok {
			return errors.New("the SQLite driver has no backup API")
		}
		bk, err := b.NewBackup(sqliteFileURI(tmpPath, ""))
		if err != nil {
			return err
		}
		// All pages in one step: one read transaction, so the copy is one
		// consistent state of the database.
		_, err = bk.Step(-1)
		pages = bk.PageCount()
		if ferr := bk.Finish(); err == nil {
			err = ferr
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("backing up %s: %w", src, err)
	}
	if err := finishCopy(ctx, tmpPath); err != nil {
		return 0, fmt.Errorf("the copy of %s: %w", src, err)
	}
	if err := os.Chmod(tmpPath, 0o600); err != nil { // it holds key hashes and usage
		return 0, err
	}
	if err := os.Rename(tmpPath, dest); err != nil {
		return 0, err
	}
	return pages, nil
}

// finishCopy makes the copy at path one self-contained file (the pages
// came with the source's WAL mode, which would leave -wal and -shm files
// beside it; the gateway turns WAL on again when it opens a restored
// copy) and runs SQLite's integrity check on it.
func finishCopy(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", sqliteFileURI(path, ""))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode, res string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("integrity check: %s", res)
	}
	return nil
}

// sqliteFileURI is a file: URI for path with the query query, the path
// escaped so that a '?' or '#' in a name is not read as its query.
func sqliteFileURI(path, query string) string {
	u := "file:" + (&url.URL{Path: path}).EscapedPath()
	if query != "" {
		u += "?" + query
	}
	return strings.ReplaceAll(u, "#", "%23")
}
