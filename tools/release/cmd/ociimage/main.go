// Command ociimage writes tollgate's container image as an OCI image
// layout, without a container daemon: one layer FROM scratch per platform
// (the static binary, CA certificates, a non-root user, /data and /tmp)
// under a multi-platform index. scripts/release runs it; the Dockerfile
// builds the same image with Docker.
//
//	ociimage -out DIR -version V -revision SHA -created RFC3339 -source URL \
//	    -ca /etc/ssl/certs/ca-certificates.crt linux/amd64=PATH linux/arm64=PATH
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed settings; the Dockerfile states the same ones.
const (
	// UID and GID of the user the gateway runs as ("nonroot", as in the
	// distroless images): numeric, so that a runtime can check it is not
	// root without reading /etc/passwd.
	uid, gid   = 65532, 65532
	binaryPath = "usr/bin/tollgate"
	caPath     = "etc/ssl/certs/ca-certificates.crt"
	dataDir    = "/data"
	port       = "8080/tcp"
)

// entrypoint listens on every interface of the container: a master key is
// then required, and TOLLGATE_MASTER_KEY_FILE (below) names where serve
// makes one when none is given. Arguments after the image name are added
// (--config FILE; a later --addr wins).
var entrypoint = []string{"/" + binaryPath, "serve", "--addr", "0.0.0.0:8080"}

var env = []string{
	"PATH=/usr/bin",
	"SSL_CERT_FILE=/" + caPath,
	"TOLLGATE_MASTER_KEY_FILE=" + dataDir + "/tollgate.master-key",
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	out := fs.String("out", "", "directory to write the OCI image layout to (must not exist)")
	version := fs.String("version", "", "the release's version")
	revision := fs.String("revision", "", "the commit it is built from")
	createdFlag := fs.String("created", "", "build time, RFC 3339 (the commit's, for a reproducible image)")
	source := fs.String("source", "https://github.com/tollgate/tollgate", "the source repository's URL")
	ca := fs.String("ca", "/etc/ssl/certs/ca-certificates.crt", "the CA certificate bundle to ship")
	name := fs.String("name", "tollgate", "the image's name, for docker load")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *version == "" || *revision == "" || fs.NArg() == 0 {
		return fmt.Errorf("usage: ociimage -out DIR -version V -revision SHA [-created T] PLATFORM=BINARY...")
	}
	created := time.Unix(0, 0).UTC()
	if *createdFlag != "" {
		t, err := time.Parse(time.RFC3339, *createdFlag)
		if err != nil {
			return fmt.Errorf("-created: %w", err)
		}
		created = t.UTC()
	}
	certs, err := os.ReadFile(*ca)
	if err != nil {
		return fmt.Errorf("CA certificates: %w", err)
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       "tollgate",
		"org.opencontainers.image.description": "An LLM API gateway speaking the Anthropic Messages, OpenAI Chat Completions and Responses APIs",
		"org.opencontainers.image.version":     *version,
		"org.opencontainers.image.revision":    *revision,
		"org.opencontainers.image.source":      *source,
		"org.opencontainers.image.url":         *source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arg := range fs.Args() {
		platform, bin, ok := strings.Cut(arg, "=")
		os_, arch, _ := strings.Cut(platform, "/")
		if !ok || os_ != "linux" || arch == "" {
			return fmt.Errorf("%q: want linux/ARCH=BINARY", arg)
		}
		binary, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		img, err := image(arch, binary, certs, labels, created)
		if err != nil {
			return fmt.Errorf("%s: %w", platform, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: os_, Architecture: arch}},
		})
	}
	idx = mutate.Annotations(idx, labels).(v1.ImageIndex)
	if _, err := os.Stat(*out); err == nil {
		return fmt.Errorf("%s exists", *out)
	}
	p, err := layout.Write(*out, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": *version,
		// docker load names the image it loads by this.
		"io.containerd.image.name": "docker.io/library/" + *name + ":" + *version,
	}))
}

// image is one platform's image: one layer and its config.
func image(arch string, binary, certs []byte, labels map[string]string, created time.Time) (v1.Image, error) {
	rootfs, err := rootFS(binary, certs, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(rootfs)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created:   v1.Time{Time: created},
		CreatedBy: "scripts/release: tollgate, CA certificates, the nonroot user",
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", arch, v1.Time{Time: created}
	cf.Config = v1.Config{
		User:         fmt.Sprintf("%d:%d", uid, gid),
		Entrypoint:   entrypoint,
		Env:          env,
		WorkingDir:   dataDir,
		ExposedPorts: map[string]struct{}{port: {}},
		Volumes:      map[string]struct{}{dataDir: {}},
		Labels:       labels,
		StopSignal:   "SIGTERM",
		// Docker and Podman run it; Kubernetes uses the chart's probes.
		Healthcheck: &v1.HealthConfig{
			Test:        []string{"CMD", "/" + binaryPath, "healthcheck"},
			Interval:    10 * time.Second,
			Timeout:     5 * time.Second,
			StartPeriod: 10 * time.Second,
			Retries:     3,
		},
	}
	return mutate.ConfigFile(img, cf)
}

// rootFS is the layer's tar: every entry owned by root but /data (the
// gateway's, for SQLite and the generated key), with the build's time.
func rootFS(binary, certs []byte, mtime time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", uid, gid, dataDir)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", gid)
	entries := []struct {
		name     string
		mode     int64
		uid, gid int
		data     []byte
	}{
		{"data/", 0o750, uid, gid, nil},
		{"etc/", 0o755, 0, 0, nil},
		{"etc/group", 0o644, 0, 0, []byte(group)},
		{"etc/passwd", 0o644, 0, 0, []byte(passwd)},
		{"etc/ssl/", 0o755, 0, 0, nil},
		{"etc/ssl/certs/", 0o755, 0, 0, nil},
		{caPath, 0o644, 0, 0, certs},
		{"tmp/", 0o1777, 0, 0, nil},
		{"usr/", 0o755, 0, 0, nil},
		{"usr/bin/", 0o755, 0, 0, nil},
		{binaryPath, 0o755, 0, 0, binary},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: mtime, Format: tar.FormatPAX}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
