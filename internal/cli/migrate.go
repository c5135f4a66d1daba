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
	db, applied, err := openDatabaseReport(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	where := config.RedactURL(cfg.Database.URL)
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "database", where, "is up to date")
		return nil
	}
	fmt.Fprintf(stdout, "database %s: applied %d migration(s):\n", where, len(applied))
	for _, m := range applied {
		fmt.Fprintln(stdout, "  "+m)
	}
	return nil
}
