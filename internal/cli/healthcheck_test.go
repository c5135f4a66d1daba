package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	t.Setenv(masterKeyFileEnv, "")
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "database: { url: \"sqlite://"+filepath.Join(dir, "gw.db")+"\" }\n"+echoModel)
	addr, _, stop := startServe(t, "--config", cfg, "--addr", "127.0.0.1:0")
	defer stop()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--url", "http://" + addr}, 0, `"database":"ok"`},
		{[]string{"--url", "http://" + addr + "/", "--path", "/healthz"}, 0, "/healthz"},
		{[]string{"--url", "http://" + addr, "--path", "/nowhere"}, 1, "404"},
		{[]string{"--url", "http://127.0.0.1:1"}, 1, "refused"},
		{[]string{"extra"}, 2, "unexpected argument"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"healthcheck"}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("%v: exit %d, %q %q; want %d and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.want)
		}
	}
}
