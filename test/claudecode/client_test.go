//go:build linux

package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// client is one developer's Claude Code: a HOME and configuration
// directory of its own, a project folder, the machine's managed settings
// as the company's IT would deploy them, and a $BROWSER.
type client struct {
	bin                     string
	home, config, work, etc string
	// opened is the file the $BROWSER script appends each URL to.
	opened string
}

// newClient lays out a developer's machine whose managed settings force
// sign-in at the gateway. The CLI's onboarding (theme, the project's
// folder trust) is done beforehand: it is not part of the gateway flow,
// and its first screen checks connectivity to Anthropic, which a test
// machine does not have.
func newClient(t *testing.T, bin, gateway string) *client {
	t.Helper()
	dir := t.TempDir()
	c := &client{
		bin:    bin,
		home:   filepath.Join(dir, "home"),
		work:   filepath.Join(dir, "work"),
		etc:    filepath.Join(dir, "etc"),
		opened: filepath.Join(dir, "opened"),
	}
	c.config = filepath.Join(c.home, ".claude")
	for _, d := range []string{c.config, c.work, filepath.Join(c.etc, "claude-code")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	managed := map[string]any{"forceLoginMethod": "gateway", "forceLoginGatewayUrl": gateway}
	onboarding := map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"numStartups":            1,
		"projects":               map[string]any{c.work: map[string]any{"hasTrustDialogAccepted": true}},
	}
	writeJSON(t, filepath.Join(c.etc, "claude-code", "managed-settings.json"), managed)
	if _, err := os.Stat("/etc/claude-code"); err == nil {
		// This machine has managed settings of its own: the overlay
		// must hide them, not merge them in.
		if err := syscall.Setxattr(filepath.Join(c.etc, "claude-code"), "trusted.overlay.opaque", []byte("y"), 0); err != nil {
			t.Fatalf("hiding this machine's /etc/claude-code from the CLI: %v", err)
		}
	}
	writeJSON(t, filepath.Join(c.config, ".claude.json"), onboarding)
	// The browser returns at once, like xdg-open; the test plays the
	// person at the browser with the URL it was given.
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" >> " + shellQuote(c.opened) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "browser"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// command runs the CLI in a mount namespace of its own, where /etc is an
// overlay that adds the client's claude-code directory: the managed
// settings path is fixed in the binary, and nothing outside the namespace
// sees the file. That needs root (CAP_SYS_ADMIN).
func (c *client) command(ctx context.Context, args ...string) *exec.Cmd {
	mount := `mount -t overlay overlay -o ro,lowerdir="$0":/etc /etc && exec "$@"`
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", mount, c.etc, c.bin}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS} // Go makes its mounts private
	cmd.Dir = c.work
	env := []string{
		"HOME=" + c.home,
		"CLAUDE_CONFIG_DIR=" + c.config,
		"TMPDIR=" + filepath.Dir(c.home),
		"BROWSER=" + filepath.Join(filepath.Dir(c.home), "browser"),
		"TERM=xterm-256color",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_TELEMETRY=1",
	}
	for _, e := range os.Environ() {
		// The machine's own Anthropic and Claude settings, and a proxy
		// that would take loopback traffic elsewhere, must not reach it.
		name, _, _ := strings.Cut(e, "=")
		switch {
		case strings.HasPrefix(name, "ANTHROPIC_"), strings.HasPrefix(name, "CLAUDE"), strings.HasPrefix(name, "OTEL_"),
			strings.HasSuffix(strings.ToLower(name), "_proxy"),
			name == "HOME", name == "TMPDIR", name == "BROWSER", name == "TERM", name == "CI":
		default:
			env = append(env, e)
		}
	}
	cmd.Env = env
	return cmd
}

// credentials is the CLI's plaintext credential store.
func (c *client) credentials() gjson.Result {
	b, _ := os.ReadFile(filepath.Join(c.config, ".credentials.json"))
	return gjson.ParseBytes(b)
}

// login signs the developer in as they would: /login at the REPL, Enter
// to connect to the gateway the managed settings name, trust it (the
// answer starts on No), and finish in the browser the CLI opens. It ends
// the CLI once the credentials hold the gateway session.
func (c *client) login(t *testing.T, br *browser) (verification, final page) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	tm := startTerminal(t, c.command(ctx))
	defer tm.stop()
	tm.waitFor(t, "for shortcuts", 30*time.Second)
	tm.press(t, "/login")
	tm.press(t, enter)
	tm.waitFor(t, "Press Enter to connect", 15*time.Second)
	tm.press(t, enter)
	tm.waitFor(t, "Trust gateway", 15*time.Second)
	tm.press(t, up, enter)
	opened := waitForLine(t, c.opened, 20*time.Second, tm)
	verification, final = br.open(t, opened)
	tm.waitFor(t, "Connected to Cloud gateway", 20*time.Second)
	// The code on the page is the one the terminal showed.
	if code := field(verification, "user_code"); code == "" || !strings.Contains(squeeze(tm.text()), squeeze(code)) {
		t.Errorf("the verification page holds user code %q, which the terminal did not show:\n%s", code, tail(tm.text(), 2000))
	}
	return verification, final
}

// waitForLine waits for the first line of the file at path, which the
// program on tm writes (or a child of it).
func waitForLine(t *testing.T, path string, timeout time.Duration, tm *terminal) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if b, err := os.ReadFile(path); err == nil {
			if line, _, ok := bytes.Cut(b, []byte("\n")); ok {
				return string(line)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CLI opened no browser within %v; it printed:\n%s", timeout, tail(tm.text(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// print runs claude -p with the developer's stored session and returns
// its stream of JSON events, and the error of a run that did not exit 0.
func (c *client) print(t *testing.T, prompt string, args ...string) ([]gjson.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := c.command(ctx, append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var events []gjson.Result
	for _, line := range strings.Split(stdout.String(), "\n") {
		if gjson.Valid(line) {
			events = append(events, gjson.Parse(line))
		}
	}
	if err != nil || len(events) == 0 || events[len(events)-1].Get("type").Str != "result" {
		return events, fmt.Errorf("claude -p: %v\nstdout:\n%s\nstderr:\n%s", err, tail(stdout.String(), 4000), tail(stderr.String(), 4000))
	}
	return events, nil
}
