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
	cfg, err := loadConfig(*cfgFlag)
	if err != nil {
		return err
	}
	db, err := openDatabase(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintln(stdout, "database", config.RedactURL(cfg.Database.URL), "is up to date")
	return nil
}
