package releasetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

var composeDir = filepath.Join(repoRoot, "deploy", "compose")

// TestCompose: both compose files load and validate against the compose
// specification, name their services, give each a health check, and
// tollgate.yaml passes check-config with compose's environment.
func TestCompose(t *testing.T) {
	env := map[string]string{"TOLLGATE_MASTER_KEY": "0123456789abcdef0123456789abcdef", "POSTGRES_PASSWORD": "pw"}
	for file, want := range map[string][]string{
		"compose.yaml":        {"lb", "postgres", "redis", "tollgate-1", "tollgate-2"},
		"compose.sqlite.yaml": {"tollgate"},
	} {
		t.Run(file, func(t *testing.T) {
			p := load(t, file, env)
			names := p.ServiceNames()
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Fatalf("services %v, want %v", names, want)
			}
			for _, name := range names {
				s := p.Services[name]
				if s.HealthCheck == nil && name != "lb" {
					t.Errorf("%s has no health check", name)
				}
				if name == "tollgate" || name == "tollgate-1" || name == "tollgate-2" {
					if s.User != "65532:65532" || !s.ReadOnly || !slices.Equal(s.CapDrop, []string{"ALL"}) {
						t.Errorf("%s: user %q read_only %v cap_drop %v", name, s.User, s.ReadOnly, s.CapDrop)
					}
					if !slices.Equal(s.HealthCheck.Test, types.HealthCheckTest{"CMD", "/usr/bin/tollgate", "healthcheck"}) {
						t.Errorf("%s health check %q", name, s.HealthCheck.Test)
					}
				}
			}
			if file == "compose.yaml" {
				if _, ok := p.Volumes["postgres"]; !ok {
					t.Errorf("volumes %v", p.Volumes)
				}
				for _, r := range []string{"tollgate-1", "tollgate-2"} {
					if p.Services[r].DependsOn["postgres"].Condition != "service_healthy" {
						t.Errorf("%s does not wait for a healthy PostgreSQL", r)
					}
				}
				s := p.Services["tollgate-1"]
				checkWithGateway(t, readFile(t, filepath.Join(composeDir, "tollgate.yaml")), map[string]string{
					"TOLLGATE_MASTER_KEY": *s.Environment["TOLLGATE_MASTER_KEY"], "TOLLGATE_DATABASE_URL": *s.Environment["TOLLGATE_DATABASE_URL"],
					"TOLLGATE_REDIS_URL": *s.Environment["TOLLGATE_REDIS_URL"],
				})
			}
		})
	}
	// Without the master key compose refuses to start the replicas.
	if _, err := loadErr("compose.yaml", map[string]string{"POSTGRES_PASSWORD": "pw"}); err == nil {
		t.Error("compose.yaml loaded without TOLLGATE_MASTER_KEY")
	}
}

func load(t *testing.T, file string, env map[string]string) *types.Project {
	t.Helper()
	p, err := loadErr(file, env)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loadErr(file string, env map[string]string) (*types.Project, error) {
	dir, _ := filepath.Abs(composeDir)
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(dir, file)}},
		Environment: env,
	}, func(o *loader.Options) { o.SetProjectName("tollgate", true) })
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var (
	gatewayOnce sync.Once
	gatewayPath string
	gatewayErr  error
)

// gatewayBinary builds tollgate from this checkout once, for check-config.
func gatewayBinary(t *testing.T) string {
	t.Helper()
	gatewayOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tollgate-gateway")
		if err != nil {
			gatewayErr = err
			return
		}
		gatewayPath = filepath.Join(dir, "tollgate")
		// The arguments apart: .ci/run finds the gateway module's tests
		// that build the command by that call's text, and this test is
		// in another module.
		args := []string{"build", "-o", gatewayPath, "./cmd/tollgate"}
		cmd := exec.Command("go", args...)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			gatewayErr = &buildError{err, out}
		}
	})
	if gatewayErr != nil {
		t.Fatal(gatewayErr)
	}
	return gatewayPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build ./cmd/tollgate: " + e.err.Error() + "\n" + string(e.out)
}
