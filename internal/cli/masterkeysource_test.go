package cli

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/config"
)

// TestResolveMasterKey holds serve's rule: a chosen key (config, env, or
// the file the env names) serves any address; the generated one only
// loopback, and beyond it the error names every way to choose one.
func TestResolveMasterKey(t *testing.T) {
	const chosen = "0123456789abcdef0123456789abcdef"
	dir := t.TempDir()
	own := filepath.Join(dir, "own.key")
	if err := os.WriteFile(own, []byte(chosen+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open.key")
	if err := os.WriteFile(open, []byte(chosen+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		cfgKey        string
		env, file     string
		addr          string
		wantKey       string // "generated": a new key, announced
		wantErr       []string
		wantFileSaved string // the file that must hold the generated key
	}{
		{name: "config key beyond loopback", cfgKey: chosen, addr: "0.0.0.0:8080", wantKey: chosen},
		{name: "config key wins over the env", cfgKey: chosen, env: "ffffffffffffffffffffffffffffffff", addr: "0.0.0.0:8080", wantKey: chosen},
		{name: "env key beyond loopback", env: chosen, addr: "0.0.0.0:8080", wantKey: chosen},
		{name: "env key too short", env: "short", addr: "127.0.0.1:8080", wantErr: []string{"TOLLGATE_MASTER_KEY"}},
		{name: "env key wins over the file", env: chosen, file: filepath.Join(dir, "unused.key"), addr: "0.0.0.0:8080", wantKey: chosen},
		{name: "operator's key file beyond loopback", file: own, addr: "0.0.0.0:8080", wantKey: chosen},
		{name: "key file others can read", file: open, addr: "0.0.0.0:8080", wantErr: []string{"TOLLGATE_MASTER_KEY_FILE", "chmod 600"}},
		{name: "missing key file is made beyond loopback", file: filepath.Join(dir, "data", "made.key"), addr: "0.0.0.0:8080", wantErr: []string{"TOLLGATE_MASTER_KEY_FILE"}},
		{name: "named key file made", file: filepath.Join(dir, "made.key"), addr: "[::]:8080", wantKey: "generated", wantFileSaved: filepath.Join(dir, "made.key")},
		{name: "nothing chosen on loopback", addr: "127.0.0.1:8080", wantKey: "generated", wantFileSaved: filepath.Join(dir, "gw.master-key")},
		{name: "nothing chosen beyond loopback", addr: "0.0.0.0:8080", wantErr: []string{
			"server.addr 0.0.0.0:8080 listens beyond this machine", "set auth.master_key or TOLLGATE_MASTER_KEY", "TOLLGATE_MASTER_KEY_FILE", "listen on 127.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TOLLGATE_MASTER_KEY", tc.env)
			t.Setenv(masterKeyFileEnv, tc.file)
			cfg := config.Default()
			cfg.Database.URL = "sqlite://" + filepath.Join(dir, "gw.db")
			cfg.Auth.MasterKey = tc.cfgKey
			key, kf, err := resolveMasterKey(cfg, tc.addr, "server.addr")
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("key %q, want an error", key)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantKey != "generated" {
				if key != tc.wantKey || kf != nil {
					t.Errorf("key %q (file %v), want %q unannounced", key, kf, tc.wantKey)
				}
				return
			}
			if kf == nil || kf.key != key || kf.path != tc.wantFileSaved {
				t.Fatalf("generated key not announced with its file %s: %+v", tc.wantFileSaved, kf)
			}
			data, err := os.ReadFile(tc.wantFileSaved)
			if err != nil || strings.TrimSpace(string(data)) != key || config.CheckMasterKey(key) != nil {
				t.Errorf("file %s holds %q (%v), key %q", tc.wantFileSaved, data, err, key)
			}
		})
	}
	for _, p := range []string{filepath.Join(dir, "data"), filepath.Join(dir, "unused.key")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

// TestServeWithKeyFileOnEveryInterface is the container's start: no
// config, --addr 0.0.0.0, TOLLGATE_MASTER_KEY_FILE naming a file on the
// data volume that is not there yet; serve listens, and the key it wrote
// (and said where) opens the admin API.
func TestServeWithKeyFileOnEveryInterface(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dir := t.TempDir()
	t.Chdir(dir)
	keyPath := filepath.Join(dir, "tollgate.master-key")
	t.Setenv(masterKeyFileEnv, keyPath)
	addr, stderr, stop := startServe(t, "--addr", "0.0.0.0:0")
	defer stop()
	if !strings.Contains(stderr.String(), keyPath) {
		t.Errorf("serve did not say where the key is:\n%s", stderr)
	}
	data, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/admin/keys", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(data)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the key in %s got %d", keyPath, resp.StatusCode)
	}
}
