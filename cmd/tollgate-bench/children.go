package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one process started by the benchmark.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	stdin   *os.File // our end of the helper's stdin pipe; closing it ends the helper
	done    chan struct{}
	waitErr error
	started time.Time // when it was exec'd: cold start counts from here
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// logTail returns the last lines of the child's log, for error messages.
func (c *child) logTail() string {
	if c.logPath == "" {
		return ""
	}
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}

// procSet tracks every child so that all of them are ended on every path
// out of the benchmark: normal return, error, panic and SIGINT/SIGTERM.
type procSet struct {
	mu       sync.Mutex
	children []*child
}

// start starts cmd with its output going to logPath and registers it.
func (s *procSet) start(name string, cmd *exec.Cmd, logPath string) (*child, error) {
	if logPath != "" {
		lf, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		defer lf.Close()
		if cmd.Stderr == nil {
			cmd.Stderr = lf
		}
		if cmd.Stdout == nil {
			cmd.Stdout = lf
		}
	}
	setChildAttrs(cmd)
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{}), started: started}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	s.mu.Lock()
	s.children = append(s.children, c)
	s.mu.Unlock()
	return c, nil
}

// stop ends one child: SIGTERM, then SIGKILL after a grace period.
func (c *child) stop() {
	if c.stdin != nil {
		_ = c.stdin.Close()
	}
	if c.exited() {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return
	case <-time.After(3 * time.Second):
	}
	_ = c.cmd.Process.Kill()
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
	}
}

// stopAll ends every registered child, in reverse start order, concurrently.
func (s *procSet) stopAll() {
	s.mu.Lock()
	cs := s.children
	s.children = nil
	s.mu.Unlock()
	var wg sync.WaitGroup
	for i := len(cs) - 1; i >= 0; i-- {
		wg.Add(1)
		go func(c *child) {
			defer wg.Done()
			c.stop()
		}(cs[i])
	}
	wg.Wait()
}

// startSelf re-executes the benchmark binary with a hidden subcommand
// ("upstream" or "proxy") and waits for the "LISTEN addr" line it prints.
func (s *procSet) startSelf(ctx context.Context, name, logPath string, gomaxprocs int, args ...string) (*child, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, "", err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, "", err
	}
	defer outR.Close()
	cmd := exec.Command(self, append(args, "-exit-on-stdin-eof")...)
	cmd.Stdin = stdinR
	cmd.Stdout = outW
	cmd.Env = withGOMAXPROCS(childEnv(), gomaxprocs)
	c, err := s.start(name, cmd, logPath)
	stdinR.Close()
	outW.Close()
	if err != nil {
		stdinW.Close()
		return nil, "", err
	}
	c.stdin = stdinW

	lineCh := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outR).ReadString('\n')
		lineCh <- line
	}()
	select {
	case line := <-lineCh:
		addr, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTEN ")
		if !ok {
			return nil, "", fmt.Errorf("%s did not start: %q\n%s", name, line, c.logTail())
		}
		return c, addr, nil
	case <-time.After(15 * time.Second):
		return nil, "", fmt.Errorf("%s: no LISTEN line within 15s\n%s", name, c.logTail())
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
}

// childEnv is the environment of helper processes: ours, minus proxy
// settings, so that nothing they send can leave the machine.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// withGOMAXPROCS sets GOMAXPROCS in env when n > 0.
func withGOMAXPROCS(env []string, n int) []string {
	if n <= 0 {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOMAXPROCS=") {
			out = append(out, kv)
		}
	}
	return append(out, fmt.Sprintf("GOMAXPROCS=%d", n))
}

// freeLoopbackPort asks the kernel for a free port on 127.0.0.1. The port is
// released before it is handed to the child, so another process could take
// it in between; on this single-purpose run that does not happen in practice.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// coldPoll is how often a starting process is polled: the resolution of
// the cold-start figure.
const coldPoll = 10 * time.Millisecond

// waitHTTP polls url with GET until it answers 200, the child exits, or the
// timeout passes.
func waitHTTP(ctx context.Context, c *child, url string, timeout time.Duration) error {
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		Timeout:   2 * time.Second,
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if c.exited() {
			return fmt.Errorf("%s exited during start-up (%v)\n%s", c.name, c.waitErr, c.logTail())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		last = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(coldPoll)
	}
	if last == nil {
		last = errors.New("timed out")
	}
	return fmt.Errorf("%s not ready within %s: %v\n%s", c.name, timeout, last, c.logTail())
}
