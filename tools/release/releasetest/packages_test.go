package releasetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// packaged is what the .deb and .rpm install, and nothing else.
var packaged = []string{"/etc/tollgate/tollgate.yaml", "/usr/bin/tollgate", "/usr/lib/systemd/system/tollgate.service"}

// TestDeb: each .deb installs the binary, the config (a conffile) and the
// unit; the unit passes systemd-analyze verify and carries the hardening;
// the packaged config passes check-config.
func TestDeb(t *testing.T) {
	dist := release(t)
	dpkgDeb := needTool(t, "dpkg-deb", "dpkg")
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			deb := filepath.Join(dist, "tollgate_"+version+"_"+arch+".deb")
			out, err := exec.Command(dpkgDeb, "-c", deb).Output()
			if err != nil {
				t.Fatalf("dpkg-deb -c: %v", err)
			}
			var files []string
			for line := range strings.Lines(string(out)) {
				fields := strings.Fields(line)
				if len(fields) < 6 || strings.HasPrefix(fields[0], "d") {
					continue
				}
				files = append(files, strings.TrimPrefix(fields[5], "."))
			}
			slices.Sort(files)
			if !slices.Equal(files, packaged) {
				t.Errorf("dpkg-deb -c lists %v, want %v", files, packaged)
			}
			for field, want := range map[string]string{"Package": "tollgate", "Version": version, "Architecture": arch} {
				got, err := exec.Command(dpkgDeb, "-f", deb, field).Output()
				if err != nil || strings.TrimSpace(string(got)) != strings.ReplaceAll(want, "-", "~") && strings.TrimSpace(string(got)) != want {
					t.Errorf("%s: %q (%v), want %q", field, got, err, want)
				}
			}
			conffiles, err := exec.Command(dpkgDeb, "-I", deb, "conffiles").Output()
			if err != nil || strings.TrimSpace(string(conffiles)) != "/etc/tollgate/tollgate.yaml" {
				t.Errorf("conffiles: %q (%v)", conffiles, err)
			}
			root := t.TempDir()
			if out, err := exec.Command(dpkgDeb, "-x", deb, root).CombinedOutput(); err != nil {
				t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
			}
			checkUnit(t, root)
			if arch == "amd64" {
				bin := filepath.Join(root, "usr/bin/tollgate")
				cmd := exec.Command(bin, "check-config", "--config", filepath.Join(root, "etc/tollgate/tollgate.yaml"))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("the packaged config: check-config: %v\n%s", err, out)
				}
			}
		})
	}
}

// checkUnit verifies the unit under root with systemd-analyze and checks
// the settings the package promises.
func checkUnit(t *testing.T, root string) {
	t.Helper()
	unit := filepath.Join(root, "usr/lib/systemd/system/tollgate.service")
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string][]string{}
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(k, "#") {
			settings[k] = append(settings[k], v)
		}
	}
	for k, want := range map[string]string{
		"ExecStart": "/usr/bin/tollgate serve --config /etc/tollgate/tollgate.yaml", "ExecReload": "/bin/kill -HUP $MAINPID",
		"DynamicUser": "yes", "StateDirectory": "tollgate", "ProtectSystem": "strict", "NoNewPrivileges": "yes",
		"CapabilityBoundingSet": "", "AmbientCapabilities": "", "Restart": "on-failure", "WantedBy": "multi-user.target",
	} {
		if got := settings[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	analyze := needTool(t, "systemd-analyze", "systemd")
	// verify checks that ExecStart's binary exists, and this machine has
	// no /usr/bin/tollgate: a copy of the unit names the unpacked one.
	// Everything else is verified as packaged.
	bin := filepath.Join(root, "usr/bin/tollgate")
	copied := filepath.Join(t.TempDir(), "tollgate.service")
	if err := os.WriteFile(copied, []byte(strings.ReplaceAll(string(data), "ExecStart=/usr/bin/tollgate ", "ExecStart="+bin+" ")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "verify", copied)
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=notice")
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestRPM: each .rpm installs the same three files, the config marked
// %config(noreplace).
func TestRPM(t *testing.T) {
	dist := release(t)
	rpm := needTool(t, "rpm", "rpm")
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			pkg := filepath.Join(dist, "tollgate_"+version+"_"+arch+".rpm")
			out, err := exec.Command(rpm, "-qp", "--qf", "[%{FILEMODES:perms} %{FILEFLAGS:fflags} %{FILENAMES}\n]", pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("rpm -qp: %v\n%s", err, out)
			}
			var files []string
			for line := range strings.Lines(string(out)) {
				f := strings.Fields(line)
				if len(f) == 2 { // no flags
					f = []string{f[0], "", f[1]}
				}
				if len(f) != 3 || strings.HasPrefix(f[0], "d") {
					continue
				}
				files = append(files, f[2])
				if f[2] == "/etc/tollgate/tollgate.yaml" && !(strings.Contains(f[1], "c") && strings.Contains(f[1], "n")) {
					t.Errorf("%s flags %q: want %%config(noreplace)", f[2], f[1])
				}
			}
			slices.Sort(files)
			if !slices.Equal(files, packaged) {
				t.Errorf("rpm lists %v, want %v", files, packaged)
			}
			wantArch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[arch]
			if got, _ := exec.Command(rpm, "-qp", "--qf", "%{ARCH}", pkg).Output(); string(got) != wantArch {
				t.Errorf("rpm arch %q, want %q", got, wantArch)
			}
			ver, _ := exec.Command(rpm, "-qp", "--qf", "%{VERSION}", pkg).Output()
			// A pre-release sorts before its release: 9.8.7~rc.1.
			if want := strings.ReplaceAll(version, "-", "~"); string(ver) != want {
				t.Errorf("rpm version %q, want %q", ver, want)
			}
		})
	}
}
