package cli

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/tokens"
	"github.com/tollgate/tollgate/internal/tracing"
)

// TestStartBuildsOnlyWhatItUses: a gateway started with a database, the
// console and the JSON request log, and serving requests whose upstream
// reports usage, never loads the tokenizer's vocabulary (some 20 MiB),
// nor, with tracing off, builds an OpenTelemetry exporter. It runs in a
// process of its own: other tests count tokens and trace.
func TestStartBuildsOnlyWhatItUses(t *testing.T) {
	if os.Getenv("TOLLGATE_TEST_START_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartBuildsOnlyWhatItUses$", "-test.v")
		cmd.Env = append(os.Environ(), "TOLLGATE_TEST_START_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	const key = "sk-test-0123456789abcdef0123456789abcdef"
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "server: { log_format: json }\nauth: { master_key: "+key+" }\n"+
		"database: { url: \"sqlite://"+filepath.Join(dir, "gw.db")+"\" }\n"+echoModel)
	addr, _, stop := startServe(t, "--config", cfg, "--addr", "127.0.0.1:0")
	for _, stream := range []string{"false", "true"} {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/chat/completions",
			strings.NewReader(`{"model":"echo","stream":`+stream+`,"messages":[{"role":"user","content":"hello"}]}`))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		// Read to the end: a stream its client leaves is estimated, with
		// the tokenizer.
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %s: status %d, %v", stream, resp.StatusCode, err)
		}
	}
	stop()
	if tokens.VocabularyLoaded() {
		t.Error("the tokenizer's vocabulary was loaded, by a start-up and requests that count no tokens")
	}
	if tracing.Built() {
		t.Error("an OpenTelemetry exporter was built, with tracing off")
	}
}
