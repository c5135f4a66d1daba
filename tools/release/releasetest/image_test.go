package releasetest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// TestImage: dist/image is an OCI layout whose index has linux/amd64 and
// linux/arm64 images, each run as a numeric non-root user with the
// gateway as entrypoint, port 8080, a /data volume and the OCI labels; the
// binary in the amd64 image serves /healthz, started as the image starts
// it (beyond loopback, the master key file on the volume made for it).
func TestImage(t *testing.T) {
	dist := release(t)
	top, err := layout.ImageIndexFromPath(filepath.Join(dist, "image"))
	if err != nil {
		t.Fatal(err)
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topManifest.Manifests) != 1 {
		t.Fatalf("index.json has %d entries, want the image index alone", len(topManifest.Manifests))
	}
	if ann := topManifest.Manifests[0].Annotations; ann["org.opencontainers.image.ref.name"] != version || ann["io.containerd.image.name"] != "docker.io/library/tollgate:"+version {
		t.Errorf("index.json annotations %v", ann)
	}
	idx, err := top.ImageIndex(topManifest.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Fatalf("platforms %v", platforms)
	}
	rev := commit(t)
	for _, d := range im.Manifests {
		t.Run(d.Platform.Architecture, func(t *testing.T) {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, cf, d.Platform.Architecture, rev)
			files := readTar(t, mutate.Extract(img))
			for _, f := range []string{"usr/bin/tollgate", "etc/ssl/certs/ca-certificates.crt", "etc/passwd", "etc/group"} {
				if len(files[f]) == 0 {
					t.Errorf("the image has no %s", f)
				}
			}
			if !strings.Contains(string(files["etc/passwd"]), ":65532:65532:") {
				t.Errorf("/etc/passwd has no user 65532:\n%s", files["etc/passwd"])
			}
			bin := filepath.Join(t.TempDir(), "tollgate")
			if err := os.WriteFile(bin, files["usr/bin/tollgate"], 0o755); err != nil {
				t.Fatal(err)
			}
			checkBinary(t, bin, "linux", d.Platform.Architecture)
			if d.Platform.Architecture != "amd64" {
				return
			}
			// As the image runs it: the entrypoint's arguments, the
			// config's environment with the data volume in a temporary
			// directory, and --addr appended (a later --addr wins).
			data := t.TempDir()
			env := []string{"TOLLGATE_MASTER_KEY_FILE=" + filepath.Join(data, "tollgate.master-key")}
			for _, e := range cf.Config.Env {
				if !strings.HasPrefix(e, "TOLLGATE_MASTER_KEY_FILE=") && !strings.HasPrefix(e, "PATH=") {
					env = append(env, e)
				}
			}
			if !slices.Contains(cf.Config.Env, "TOLLGATE_MASTER_KEY_FILE=/data/tollgate.master-key") {
				t.Errorf("env %v does not name the key file on /data", cf.Config.Env)
			}
			addr := serveBinary(t, bin, env, cf.Config.Entrypoint[1:]...)
			key, err := os.ReadFile(filepath.Join(data, "tollgate.master-key"))
			if err != nil {
				t.Fatalf("no master key file made: %v", err)
			}
			req, _ := http.NewRequest("GET", "http://"+addr+"/admin/keys", nil)
			req.Header.Set("Authorization", "Bearer "+string(bytes.TrimSpace(key)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("the generated key got %d from /admin/keys", resp.StatusCode)
			}
		})
	}
}

func checkConfig(t *testing.T, cf *v1.ConfigFile, arch, rev string) {
	t.Helper()
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != arch {
		t.Errorf("config platform %s/%s", cf.OS, cf.Architecture)
	}
	if c.User != "65532:65532" {
		t.Errorf("User %q, want the numeric non-root 65532:65532", c.User)
	}
	if want := []string{"/usr/bin/tollgate", "serve", "--addr", "0.0.0.0:8080"}; !slices.Equal(c.Entrypoint, want) {
		t.Errorf("Entrypoint %q, want %q", c.Entrypoint, want)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("ExposedPorts %v", c.ExposedPorts)
	}
	if _, ok := c.Volumes["/data"]; !ok || c.WorkingDir != "/data" {
		t.Errorf("Volumes %v, WorkingDir %q", c.Volumes, c.WorkingDir)
	}
	if c.Healthcheck == nil || !slices.Equal(c.Healthcheck.Test, []string{"CMD", "/usr/bin/tollgate", "healthcheck"}) {
		t.Errorf("Healthcheck %+v", c.Healthcheck)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": rev,
		"org.opencontainers.image.source":   "https://github.com/tollgate/tollgate",
		"org.opencontainers.image.licenses": "Apache-2.0",
	} {
		if c.Labels[k] != want {
			t.Errorf("label %s=%q, want %q", k, c.Labels[k], want)
		}
	}
	if created := c.Labels["org.opencontainers.image.created"]; created == "" || created != cf.Created.UTC().Format("2006-01-02T15:04:05Z") {
		t.Errorf("label created %q, config created %v", created, cf.Created)
	}
	raw, _ := json.Marshal(cf)
	if bytes.Contains(raw, []byte(`"User":"root"`)) || bytes.Contains(raw, []byte(`"User":"0`)) {
		t.Errorf("config runs as root: %s", raw)
	}
}
