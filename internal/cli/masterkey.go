package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tollgate/tollgate/internal/config"
)

// masterKeyFile is the generated master key of a gateway that was given
// none, kept in a file only its owner can read, next to the database (in
// the working directory without an SQLite file), so that it survives
// restarts and is never printed.
type masterKeyFile struct {
	path    string
	key     string
	created bool
}

// masterKeyFileName is the file's name; with an SQLite database it is the
// database's name with this suffix instead ("tollgate.master-key").
const masterKeyFileName = "tollgate.master-key"

func masterKeyPath(cfg *config.Config) string {
	if p, ok := sqlitePath(cfg.Database.URL); ok {
		return strings.TrimSuffix(p, filepath.Ext(p)) + ".master-key"
	}
	return masterKeyFileName
}

// loadOrCreateMasterKey reads the key file at path, or makes a key and
// writes the file (mode 0600) when there is none.
func loadOrCreateMasterKey(path string) (*masterKeyFile, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		st, serr := os.Stat(path)
		if serr == nil && st.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("master key file %s can be read by others (mode %v): chmod 600 it, or set auth.master_key", path, st.Mode().Perm())
		}
		key := strings.TrimSpace(string(data))
		if err := config.CheckMasterKey(key); err != nil {
			return nil, fmt.Errorf("master key file %s: the key %w", path, err)
		}
		return &masterKeyFile{path: path, key: key}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("master key file: %w", err)
	}
	key := generateKey()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("writing the generated master key: %w", err)
	}
	_, err = f.WriteString(key + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("writing the generated master key to %s: %w", path, err)
	}
	return &masterKeyFile{path: path, key: key, created: true}, nil
}

// shellQuote quotes a path for a shell command line when it needs it.
func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
