package cli

import (
	"fmt"
	"os"

	"github.com/tollgate/tollgate/internal/config"
)

// masterKeyFileEnv names a file that holds the master key: a mounted
// secret, or the container image's /data/tollgate.master-key, which serve
// makes with a generated key on the first start.
const masterKeyFileEnv = "TOLLGATE_MASTER_KEY_FILE"

// resolveMasterKey applies serve's one rule for the master key. A key
// someone chose serves any address: auth.master_key, else
// $TOLLGATE_MASTER_KEY, else the key in the file $TOLLGATE_MASTER_KEY_FILE
// names (made, mode 0600, with a generated key when it does not exist).
// Without any of them serve generates a key and keeps it next to the
// database, and then listens on loopback only, so that a forgotten test
// instance cannot be reached from elsewhere with a key nobody looked at: an
// address beyond loopback is refused with an error that names the three
// ways, never narrowed in silence. keyFile is set when the key was
// generated, for serve to say where it is.
func resolveMasterKey(cfg *config.Config, addr, addrFrom string) (key string, keyFile *masterKeyFile, err error) {
	if cfg.Auth.MasterKey != "" {
		return cfg.Auth.MasterKey, nil, nil
	}
	env, file := os.Getenv("TOLLGATE_MASTER_KEY"), os.Getenv(masterKeyFileEnv)
	switch {
	case env != "": // wins over the file, which the container image names
		if err := config.CheckMasterKey(env); err != nil {
			return "", nil, fmt.Errorf("TOLLGATE_MASTER_KEY: %w", err)
		}
		return env, nil, nil
	case file != "":
		kf, err := loadOrCreateMasterKey(file)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", masterKeyFileEnv, err)
		}
		if !kf.created {
			return kf.key, nil, nil // the operator's own file: nothing to announce
		}
		return kf.key, kf, nil
	}
	if !loopback(addr) {
		return "", nil, fmt.Errorf("%s %s listens beyond this machine, and no master key is configured: set auth.master_key or TOLLGATE_MASTER_KEY "+
			"(at least %d characters; generate one with: openssl rand -hex 32), or %s to a file that holds one (serve makes it with a generated key "+
			"if it does not exist), or listen on 127.0.0.1", addrFrom, addr, config.MinMasterKeyLen, masterKeyFileEnv)
	}
	kf, err := loadOrCreateMasterKey(masterKeyPath(cfg))
	if err != nil {
		return "", nil, err
	}
	return kf.key, kf, nil
}
