// Package releasetest runs scripts/release into a temporary directory and
// checks what it made: the archives, checksums, SBOM, packages, image,
// Helm chart and compose files. It takes minutes (four cross-compiled
// builds), so go test -short skips it.
package releasetest

import (
	"archive/tar"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// version is the test release's: a pre-release, so that nothing can pass
// by reading a version from elsewhere.
const version = "9.8.7-rc.1"

var (
	once     sync.Once
	dist     string
	buildErr error
	repoRoot = filepath.Join("..", "..", "..")
)

// release runs scripts/release once for every test in the package.
func release(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the release build takes minutes: run without -short")
	}
	once.Do(func() {
		dir, err := os.MkdirTemp("", "tollgate-release-test")
		if err != nil {
			buildErr = err
			return
		}
		dist = filepath.Join(dir, "dist")
		cmd := exec.Command("scripts/release", version)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "DIST="+dist)
		began := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("scripts/release: %v\n%s", err, out)
			return
		}
		fmt.Printf("scripts/release %s took %v:\n%s", version, time.Since(began).Round(time.Second), out)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return dist
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dist != "" {
		os.RemoveAll(filepath.Dir(dist))
	}
	if gatewayPath != "" {
		os.RemoveAll(filepath.Dir(gatewayPath))
	}
	os.Exit(code)
}

// needTool returns the path of a command the test needs, or skips saying
// how to install it; in CI a missing tool fails the test.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s is not installed (apt-get install %s)", name, pkg)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func commit(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repoRoot, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

var targets = []struct{ os, arch string }{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// TestArchives: each archive holds the binary, LICENSE and README.md; the
// binary is static, stripped, for its platform, and the linux/amd64 one
// prints the version and the commit.
func TestArchives(t *testing.T) {
	dist := release(t)
	for _, tg := range targets {
		t.Run(tg.os+"_"+tg.arch, func(t *testing.T) {
			name := fmt.Sprintf("tollgate_%s_%s_%s.tar.gz", version, tg.os, tg.arch)
			files := untar(t, filepath.Join(dist, name), false)
			var names []string
			for n := range files {
				names = append(names, n)
			}
			slices.Sort(names)
			if want := []string{"LICENSE", "README.md", "tollgate"}; !slices.Equal(names, want) {
				t.Fatalf("%s holds %v, want %v", name, names, want)
			}
			bin := filepath.Join(t.TempDir(), "tollgate")
			if err := os.WriteFile(bin, files["tollgate"], 0o755); err != nil {
				t.Fatal(err)
			}
			checkBinary(t, bin, tg.os, tg.arch)
			if tg.os == "linux" && tg.arch == "amd64" {
				out, err := exec.Command(bin, "version").CombinedOutput()
				if err != nil {
					t.Fatalf("tollgate version: %v\n%s", err, out)
				}
				if !strings.HasPrefix(string(out), "tollgate "+version+"\nrevision "+commit(t)+" (20") {
					t.Errorf("tollgate version printed:\n%s", out)
				}
			}
		})
	}
}

// checkBinary checks the file is an executable for os/arch, static (no
// interpreter) and stripped (no symbol table, no DWARF), with the build
// info the SBOM reads.
func checkBinary(t *testing.T, path, goos, arch string) {
	t.Helper()
	switch goos {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
		if f.Machine != want {
			t.Errorf("machine %v, want %v", f.Machine, want)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("dynamically linked: the binary has an interpreter")
			}
		}
		if f.Section(".symtab") != nil || f.Section(".debug_info") != nil {
			t.Error("not stripped (-s -w): the binary has a symbol table or DWARF")
		}
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[arch]
		if f.Cpu != want {
			t.Errorf("cpu %v, want %v", f.Cpu, want)
		}
		// Stripped, the symbol table keeps only what dyld binds
		// (libSystem's functions), none of Go's.
		if f.Segment("__DWARF") != nil {
			t.Error("not stripped (-w): the binary has DWARF")
		}
		if f.Symtab != nil && slices.ContainsFunc(f.Symtab.Syms, func(s macho.Symbol) bool { return strings.HasPrefix(s.Name, "runtime.") }) {
			t.Error("not stripped (-s): the binary has Go's symbols")
		}
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	// (-trimpath keeps -ldflags out of the build info.)
	if settings["-trimpath"] != "true" || settings["CGO_ENABLED"] != "0" || settings["GOOS"] != goos || settings["GOARCH"] != arch {
		t.Errorf("build settings %v: want -trimpath and CGO_ENABLED=0 for %s/%s", settings, goos, arch)
	}
}

// untar reads a .tar.gz (or a plain .tar) into memory: its regular files
// by name, without a leading "./".
func untar(t *testing.T, path string, plain bool) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if !plain {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	return readTar(t, r)
}

func readTar(t *testing.T, r io.Reader) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(h.Name, "./")] = data
	}
}

// TestChecksums: SHA256SUMS covers every file of the release, and
// sha256sum -c accepts it.
func TestChecksums(t *testing.T) {
	dist := release(t)
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for line := range strings.Lines(string(sums)) {
		_, name, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		listed = append(listed, name)
	}
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "SHA256SUMS" {
			files = append(files, e.Name())
		}
	}
	if !slices.Equal(listed, files) {
		t.Errorf("SHA256SUMS lists %v, the release has %v", listed, files)
	}
	for _, want := range []string{
		"tollgate_" + version + "_amd64.deb", "tollgate_" + version + "_arm64.deb",
		"tollgate_" + version + ".cdx.json", "tollgate_" + version + "_oci.tar",
	} {
		if !slices.Contains(files, want) {
			t.Errorf("the release has no %s: %v", want, files)
		}
	}
	cmd := exec.Command(needTool(t, "sha256sum", "coreutils"), "--strict", "-c", "SHA256SUMS")
	cmd.Dir = dist
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
}

// TestSBOM: the CycloneDX SBOM names tollgate at the release's version and
// lists every module the linux/amd64 binary's build info records.
func TestSBOM(t *testing.T) {
	dist := release(t)
	data, err := os.ReadFile(filepath.Join(dist, "tollgate_"+version+".cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat   string `json:"bomFormat"`
		SpecVersion string `json:"specVersion"`
		Metadata    struct {
			Component struct{ Name, Version string } `json:"component"`
		} `json:"metadata"`
		Components []struct {
			PURL string `json:"purl"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion == "" {
		t.Errorf("bomFormat %q specVersion %q", bom.BOMFormat, bom.SpecVersion)
	}
	if c := bom.Metadata.Component; c.Name != "github.com/tollgate/tollgate" || !strings.Contains(c.Version, version) {
		t.Errorf("metadata.component %+v", c)
	}
	var purls []string
	for _, c := range bom.Components {
		purls = append(purls, c.PURL)
	}
	bin := filepath.Join(t.TempDir(), "tollgate")
	os.WriteFile(bin, untar(t, filepath.Join(dist, "tollgate_"+version+"_linux_amd64.tar.gz"), false)["tollgate"], 0o755)
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range info.Deps {
		d := dep
		if dep.Replace != nil {
			d = dep.Replace
		}
		want := "pkg:golang/" + d.Path + "@" + d.Version
		if !slices.ContainsFunc(purls, func(p string) bool { return p == want || strings.HasPrefix(p, want+"?") }) {
			t.Errorf("the SBOM does not list %s", want)
		}
	}
	for _, main := range []string{"modernc.org/sqlite", "github.com/jackc/pgx/v5", "github.com/redis/go-redis/v9"} {
		if !slices.ContainsFunc(purls, func(p string) bool { return strings.HasPrefix(p, "pkg:golang/"+main+"@") }) {
			t.Errorf("the SBOM does not list %s", main)
		}
	}
}

// serveBinary starts the binary as the image would (args after the
// entrypoint's), on a free loopback port, and waits for /healthz.
func serveBinary(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append(args, "--addr", addr)...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not serve /healthz on %s:\n%s", bin, addr, out.String())
	return ""
}
