package cli

import (
	"fmt"
	"io"

	"github.com/tollgate/tollgate/internal/config"
)

// migrate applies the database migrations alone (serve applies them too).
func migrate(args []string, stdout io.Writer) error {
	fs := newFlagSet("migrate", stdout)
	cfgFlag := fs.String("config", "", "configuration file (default $TOLLGATE_CONFIG; none: the default database)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := config.Default()
	if path := configPath(*cfgFlag); path != "" {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return err
		}
	}
	db, err := openDatabase(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintln(stdout, "database", maskURL(cfg.Database.URL), "is up to date")
	return nil
}
