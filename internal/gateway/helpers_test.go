package gateway_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const (
	masterKey   = "sk-client-master-key-1234"
	upstreamKey = "sk-upstream-secret-5678"
)

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is a gateway in front of fake upstreams.
type env struct {
	t    *testing.T
	gw   *httptest.Server
	logs *syncBuffer
}

// newEnv starts a gateway with an anthropic provider on ant, an openai
// provider on oai (either may be nil) and the echo provider. extraYAML is
// appended to the provider entries (e.g. timeouts).
func newEnv(t *testing.T, ant, oai *upstreamtest.Server, providerExtra string) *env {
	t.Helper()
	antURL, oaiURL := "http://127.0.0.1:1", "http://127.0.0.1:1/v1"
	if ant != nil {
		antURL = ant.URL
		t.Cleanup(ant.Close)
	}
	if oai != nil {
		oaiURL = oai.URL + "/v1"
		t.Cleanup(oai.Close)
	}
	yaml := `
server: { max_body_bytes: 4096 }
providers:
  - { name: ant, type: anthropic, base_url: "` + antURL + `", api_key: "` + upstreamKey + `"` + providerExtra + ` }
  - { name: oai, type: openai, base_url: "` + oaiURL + `", api_key: "` + upstreamKey + `"` + providerExtra + ` }
  - { name: demo, type: echo }
models:
  - { name: claude-x, aliases: [anthropic/claude-x], targets: [ { provider: ant, model: claude-upstream-id } ] }
  - { name: gpt-x, targets: [ { provider: oai, model: gpt-upstream-id } ] }
  - { name: echo, targets: [ { provider: demo } ] }
`
	return newEnvYAML(t, yaml)
}

// newEnvYAML starts a gateway configured by yaml.
func newEnvYAML(t *testing.T, yaml string) *env {
	t.Helper()
	return newEnvStore(t, yaml, nil)
}

// newEnvStore starts a gateway configured by yaml, with db (nil: none)
// holding its keys and stored responses.
func newEnvStore(t *testing.T, yaml string, db *store.Store) *env {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &syncBuffer{}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Store: db})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	h, closeIdle := built.Handler, built.Close
	gw := httptest.NewServer(h)
	t.Cleanup(func() { gw.Close(); closeIdle() })
	return &env{t: t, gw: gw, logs: logs}
}

// do sends a request with the given headers ("Name: value" lines).
func (e *env) do(method, path, body string, headers ...string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.gw.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := e.gw.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

var (
	anthropicAuth = []string{"x-api-key: " + masterKey, "anthropic-version: 2023-06-01"}
	openAIAuth    = []string{"Authorization: Bearer " + masterKey}
)

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return b
}

// logLine returns the log line of the request with the given id.
func (e *env) logLine(id string) gjson.Result {
	e.t.Helper()
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if gjson.Get(line, "request_id").String() == id {
			return gjson.Parse(line)
		}
	}
	e.t.Fatalf("no log line for %s in:\n%s", id, e.logs.String())
	return gjson.Result{}
}
