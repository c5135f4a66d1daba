package claudecode_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal runs a program on a pseudo-terminal, as a developer's terminal
// would, and keeps everything it prints.
type terminal struct {
	cmd  *exec.Cmd
	pty  *os.File
	done chan struct{} // closed when the program's output ends

	mu   sync.Mutex
	out  bytes.Buffer
	seen int // how much of the squeezed output an earlier wait consumed
}

// startTerminal starts cmd on a 50×160 terminal. The program is killed,
// and its terminal closed, when the test ends.
func startTerminal(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatalf("starting %s on a terminal: %v", cmd.Path, err)
	}
	tm := &terminal{cmd: cmd, pty: f, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil { // EIO once the program and its children are gone
				return
			}
		}
	}()
	t.Cleanup(func() {
		tm.stop()
		f.Close()
	})
	return tm
}

// escapes are the terminal control sequences an Ink program prints: CSI
// (cursor moves, colours, modes), OSC (titles, hyperlinks, queries),
// character-set selection and single-character escapes.
var escapes = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78DEHMNOc]`)

// squeeze is text as a matcher sees it: without control sequences and
// without any white space, since a terminal program may move the cursor
// instead of printing spaces.
func squeeze(s string) string {
	s = escapes.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f || r == '\u00a0' {
			return -1
		}
		return r
	}, s)
}

// text is what the program printed, without control sequences: for
// failure messages.
func (tm *terminal) text() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return escapes.ReplaceAllString(tm.out.String(), "")
}

// waitFor waits until the program prints want after what an earlier
// waitFor matched, spaces aside, and fails the test after timeout or when
// the program ends first.
func (tm *terminal) waitFor(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	want = squeeze(want)
	deadline := time.Now().Add(timeout)
	for {
		tm.mu.Lock()
		s := squeeze(tm.out.String())
		if tm.seen > len(s) {
			tm.seen = 0
		}
		i := strings.Index(s[tm.seen:], want)
		if i >= 0 {
			tm.seen += i + len(want)
		}
		tm.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-tm.done:
			t.Fatalf("the program ended before printing %q; it printed:\n%s", want, tail(tm.text(), 3000))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the terminal after %v; it printed:\n%s", want, timeout, tail(tm.text(), 3000))
		}
	}
}

// press sends keys as typed; Ink reads a burst of input as one paste, so
// a key that submits goes on its own after a pause.
func (tm *terminal) press(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		time.Sleep(300 * time.Millisecond)
		if _, err := io.WriteString(tm.pty, k); err != nil {
			t.Fatalf("typing %q: %v", k, err)
		}
	}
}

// Keys as a terminal sends them.
const (
	enter = "\r"
	up    = "\x1b[A"
	ctrlC = "\x03"
)

// stop ends the program: Ctrl-C twice, as a developer leaves the REPL,
// then a kill if it lingers.
func (tm *terminal) stop() {
	if tm.cmd.ProcessState != nil {
		return
	}
	for range 2 {
		io.WriteString(tm.pty, ctrlC)
		time.Sleep(200 * time.Millisecond)
	}
	exited := make(chan error, 1)
	go func() { exited <- tm.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		tm.cmd.Process.Kill()
		if err := <-exited; err != nil && !errors.Is(err, os.ErrProcessDone) {
			return
		}
	}
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "[...]" + s[len(s)-n:]
}
