package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupRestores copies a database with a key in it, changes the
// original, and opens the copy as a gateway's database: it holds the key
// made before the copy and not the one made after.
func TestBackupRestores(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	dir := t.TempDir()
	writeCfg := func(name, db string) string {
		p := filepath.Join(dir, name)
		yaml := "database: { url: \"sqlite://" + db + "\" }\nproviders: [ { name: demo, type: echo } ]\nmodels: [ { name: echo, targets: [ { provider: demo } ] } ]\n"
		if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	orig := writeCfg("orig.yaml", filepath.Join(dir, "tollgate.db"))
	copyPath := filepath.Join(dir, "backups", "tollgate copy.db")
	if err := os.Mkdir(filepath.Dir(copyPath), 0o700); err != nil {
		t.Fatal(err)
	}
	restored := writeCfg("restored.yaml", copyPath)

	mustRun := func(args ...string) string {
		t.Helper()
		out, errs, code := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s%s", args, code, out, errs)
		}
		return out
	}
	mustRun("migrate", "--config", orig)
	mustRun("keys", "create", "--name", "before-backup", "--config", orig)
	out := mustRun("backup", "--config", orig, copyPath)
	if !strings.Contains(out, copyPath) {
		t.Errorf("backup printed %q", out)
	}
	mustRun("keys", "create", "--name", "after-backup", "--config", orig)

	st, err := os.Stat(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("copy mode %v, want 0600", st.Mode().Perm())
	}
	list := mustRun("keys", "list", "--json", "--config", restored)
	if !strings.Contains(list, "before-backup") || strings.Contains(list, "after-backup") {
		t.Errorf("the copy's keys: %s", list)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "backups", ".*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"backup", "--config", orig, copyPath}, 1, "exists"},
		{[]string{"backup", "--config", orig}, 2, "want one argument"},
		{[]string{"backup", "--config", writeCfg("missing.yaml", filepath.Join(dir, "none.db")), filepath.Join(dir, "y.db")}, 1, "none.db"},
	} {
		_, errs, code := run(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}

	pg := filepath.Join(dir, "postgres.yaml")
	os.WriteFile(pg, []byte("database: { url: \"postgres://u:secret@db/tollgate\" }\nproviders: [ { name: demo, type: echo } ]\nmodels: [ { name: echo, targets: [ { provider: demo } ] } ]\n"), 0o600)
	if _, errs, code := run(t, "backup", "--config", pg, filepath.Join(dir, "pg.db")); code != 1 || !strings.Contains(errs, "pg_dump") || strings.Contains(errs, "secret") {
		t.Errorf("PostgreSQL: exit %d, %q", code, errs)
	}
}
