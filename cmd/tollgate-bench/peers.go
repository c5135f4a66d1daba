package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Peers: other LLM gateways, built from the Go module proxy at pinned
// versions into a cache directory outside the repository
// ($XDG_CACHE_HOME/tollgate-bench, or ~/.cache/tollgate-bench), and run
// against the same fake upstream as every other target. A peer that
// cannot be built or run here is skipped, and the reason is reported.

// peerSpec is one peer gateway.
type peerSpec struct {
	name    string // the target's name
	module  string // Go module path
	version string // pinned release
	pkg     string // main package, relative to the module root
	// embedStubs are files a main package embeds but the module zip does
	// not carry (a web UI built outside Go); an empty file stands in.
	embedStubs []string
	// binName is the binary's cache name, shared by targets that run
	// the same build differently.
	binName string
	// start runs the built binary; nil when the benchmark has no
	// configuration for the peer.
	start func(ctx context.Context, procs *procSet, tmp, bin, upstreamAddr string, gomaxprocs int) (*target, error)
}

var peers = []peerSpec{
	{name: "cliproxyapi", module: "github.com/router-for-me/CLIProxyAPI/v7", version: "v7.2.140", pkg: "./cmd/server",
		binName: "cliproxyapi", start: startCLIProxyAPI},
	{name: "bifrost", module: "github.com/maximhq/bifrost/transports", version: "v1.5.3", pkg: "./bifrost-http",
		embedStubs: []string{"bifrost-http/ui/index.html"}, binName: "bifrost"},
	{name: "bifrost-nolog", module: "github.com/maximhq/bifrost/transports", version: "v1.5.3", pkg: "./bifrost-http",
		embedStubs: []string{"bifrost-http/ui/index.html"}, binName: "bifrost"},
	{name: "gomodel", module: "github.com/enterpilot/gomodel", version: "v0.1.89", pkg: "./cmd/gomodel", binName: "gomodel"},
	{name: "new-api", module: "github.com/QuantumNous/new-api", version: "v0.12.10", pkg: ".",
		embedStubs: []string{"web/default/dist/index.html", "web/classic/dist/index.html", "web/dist/index.html"}, binName: "new-api"},
}

// peersOff, when set, skips every peer with this reason (the short
// tests, which must not build other projects).
var peersOff string

func peerByName(name string) (peerSpec, bool) {
	for _, p := range peers {
		if p.name == name {
			return p, true
		}
	}
	return peerSpec{}, false
}

// peerNames lists the peers' target names.
func peerNames() []string {
	var out []string
	for _, p := range peers {
		out = append(out, p.name)
	}
	return out
}

// peerCacheDir is where peer builds are kept between runs.
func peerCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "tollgate-bench"), nil
}

// buildPeer returns the peer's binary, building it on the first run: `go
// install module/pkg@version` into the cache, or, when the proxy serves
// the release but go install refuses it (it also reads the module's
// version list, for deprecation notices), the release's source from the
// module cache built in a copy. Errors are errSkipped, with go's reason.
func buildPeer(ctx context.Context, p peerSpec, logf func(string, ...any)) (string, error) {
	cache, err := peerCacheDir()
	if err != nil {
		return "", errSkipped{"could not be built: no cache directory: " + err.Error()}
	}
	bin := filepath.Join(cache, "bin", p.binName+"-"+p.version)
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() {
		return bin, nil
	}
	logf("%s: building %s@%s into %s (first run only; minutes)", p.name, p.module, p.version, cache)
	gobin := filepath.Join(cache, "gobin", p.binName+"-"+p.version)
	if err := os.MkdirAll(gobin, 0o755); err != nil {
		return "", err
	}
	env := append(childEnv(), "GOFLAGS=-mod=mod", "GOBIN="+gobin)
	target := strings.TrimSuffix(p.module+"/"+strings.TrimPrefix(strings.TrimPrefix(p.pkg, "."), "/"), "/")
	install := exec.CommandContext(ctx, "go", "install", target+"@"+p.version)
	install.Env, install.Dir = env, cache
	out, ierr := install.CombinedOutput()
	if ierr == nil {
		ents, err := os.ReadDir(gobin)
		if err != nil || len(ents) != 1 {
			return "", errSkipped{"could not be built: go install left no single binary in " + gobin}
		}
		return bin, os.Rename(filepath.Join(gobin, ents[0].Name()), bin)
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	// The release's source, as the module proxy serves it.
	dl := exec.CommandContext(ctx, "go", "mod", "download", "-json", p.module+"@"+p.version)
	dl.Env, dl.Dir = env, cache
	dout, _ := dl.Output()
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(dout, &mod); err != nil || mod.Error != "" || mod.Dir == "" {
		reason := mod.Error
		if reason == "" {
			reason = goError(out)
		}
		reason = strings.TrimPrefix(goReason(reason), p.module+"@"+p.version+": ")
		return "", errSkipped{fmt.Sprintf("could not be built: %s@%s: %s", p.module, p.version, reason)}
	}
	src := filepath.Join(cache, "src", p.binName+"-"+p.version)
	_ = os.RemoveAll(src)
	if err := os.CopyFS(src, os.DirFS(mod.Dir)); err != nil {
		return "", errSkipped{"could not be built: copying the source: " + err.Error()}
	}
	for _, f := range p.embedStubs {
		path := filepath.Join(src, filepath.FromSlash(f))
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte("<!doctype html>\n"), 0o644); err != nil {
			return "", err
		}
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, p.pkg)
	build.Env, build.Dir = append(childEnv(), "GOFLAGS=-mod=mod"), src
	if bout, err := build.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", errSkipped{fmt.Sprintf("could not be built: go build %s@%s: %s", p.module, p.version, goError(bout))}
	}
	return bin, nil
}

// goError is the last non-empty line of go's output.
func goError(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return "no output"
}

// goReason shortens go's account of a refused download to what a reader
// needs: the status and the server's answer, without the proxy's URL.
func goReason(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if i := strings.Index(s, "reading https://"); i >= 0 {
		if j := strings.Index(s[i:], ": "); j >= 0 {
			rest := s[i+j+2:]
			if status, answer, ok := strings.Cut(rest, "server response:"); ok {
				rest = strings.TrimSpace(status) + " (" + strings.TrimSpace(answer) + ")"
			}
			s = s[:i] + "the module proxy answered " + rest
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

// startPeer builds (or finds) and runs one peer.
func startPeer(ctx context.Context, procs *procSet, tmp string, p peerSpec, upstreamAddr string, gomaxprocs int, logf func(string, ...any)) (*target, error) {
	bin, err := buildPeer(ctx, p, logf)
	if err != nil {
		return nil, err
	}
	if p.start == nil {
		return nil, errSkipped{fmt.Sprintf("built (%s@%s), but the benchmark has no configuration for it", p.module, p.version)}
	}
	t, err := p.start(ctx, procs, tmp, bin, upstreamAddr, gomaxprocs)
	if err != nil {
		var skip errSkipped
		if errors.As(err, &skip) || ctx.Err() != nil {
			return nil, err
		}
		return nil, errSkipped{"could not be run: " + firstLine(err.Error())}
	}
	return t, nil
}

// peerWorkloads are the workloads a peer is measured on: OpenAI chat
// to an OpenAI upstream, Anthropic Messages to an Anthropic upstream, and
// OpenAI chat to the Anthropic upstream where the peer translates. Their
// configurations route no embedding model, so the embeddings workloads
// are not among them.
var peerWorkloads = map[string]bool{
	"small": true, "large": true, "stream": true, "anthropic": true, "stream-anthropic": true,
	"small-translated": true, "stream-translated": true,
}

// cliproxyapiConfig is CLIProxyAPI's configuration: the fake upstream as
// an OpenAI-compatible provider (bench-o) and as a Claude API key's
// custom endpoint (bench-a), one client API key, usage statistics on
// (its in-process record of every request), retries and cooling off so
// that every request is one upstream call. Its request-log stays off: it
// writes every request and response in full to a file of their own, a
// debugging aid rather than an access log or a ledger.
func cliproxyapiConfig(port int, upstreamAddr, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# generated by tollgate-bench\nhost: \"127.0.0.1\"\nport: %d\n", port)
	fmt.Fprintf(&b, "auth-dir: %q\n", filepath.Join(dir, "auth"))
	fmt.Fprintf(&b, "api-keys:\n  - %q\n", tollgateMasterKey)
	b.WriteString("remote-management:\n  allow-remote: false\n  secret-key: \"\"\n  disable-control-panel: true\n")
	b.WriteString("debug: false\nlogging-to-file: false\nrequest-log: false\nusage-statistics-enabled: true\n")
	b.WriteString("request-retry: 0\ndisable-cooling: true\ndisable-claude-cloak-mode: true\n")
	b.WriteString("openai-compatibility:\n")
	b.WriteString("  - name: \"bench\"\n")
	fmt.Fprintf(&b, "    base-url: \"http://%s/v1\"\n", upstreamAddr)
	b.WriteString("    api-key-entries:\n      - api-key: \"upstream-key\"\n")
	fmt.Fprintf(&b, "    models:\n      - name: %q\n        alias: %q\n", upstreamModelOpenAI, tollgateModelOpenAI)
	b.WriteString("claude-api-key:\n")
	b.WriteString("  - api-key: \"upstream-key\"\n")
	fmt.Fprintf(&b, "    base-url: \"http://%s\"\n", upstreamAddr)
	fmt.Fprintf(&b, "    models:\n      - name: %q\n        alias: %q\n", upstreamModelAnthr, tollgateModelAnthr)
	return b.String()
}

// startCLIProxyAPI runs CLIProxyAPI with -local-model (its embedded model
// catalogue: nothing is fetched) and waits for a chat request through it.
func startCLIProxyAPI(ctx context.Context, procs *procSet, tmp, bin, upstreamAddr string, gomaxprocs int) (*target, error) {
	dir := filepath.Join(tmp, "cliproxyapi.d")
	if err := os.MkdirAll(filepath.Join(dir, "auth"), 0o700); err != nil {
		return nil, err
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(conf, []byte(cliproxyapiConfig(port, upstreamAddr, dir)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-config", conf, "-local-model")
	cmd.Dir = dir
	cmd.Env = withGOMAXPROCS(append(childEnv(), "HOME="+dir), gomaxprocs)
	c, err := procs.start("cliproxyapi", cmd, filepath.Join(dir, "cliproxyapi.log"))
	if err != nil {
		return nil, err
	}
	t := &target{Name: "cliproxyapi", BaseURL: fmt.Sprintf("http://127.0.0.1:%d", port), proc: c, gateway: true, peer: true}
	if err := waitChat(ctx, c, t, 60*time.Second); err != nil {
		return nil, err
	}
	return t, nil
}

// waitChat polls the target with a small chat request until it answers
// 200: a gateway is up when it relays, whatever its health endpoint says.
func waitChat(ctx context.Context, c *child, t *target, timeout time.Duration) error {
	small, _ := workloadByName("small")
	spec := newReqSpec(t, small)
	client := newLoadClient()
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	var last error
	buf := make([]byte, 32<<10)
	for time.Now().Before(deadline) {
		if c.exited() {
			return fmt.Errorf("%s exited during start-up (%v)\n%s", c.name, c.waitErr, c.logTail())
		}
		_, _, err := spec.do(ctx, client, buf)
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(coldPoll)
	}
	return fmt.Errorf("%s not relaying within %s: %v\n%s", c.name, timeout, last, bytes.TrimSpace([]byte(c.logTail())))
}
