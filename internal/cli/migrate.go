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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, "unexpected argument %q", fs.Arg(0))
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
