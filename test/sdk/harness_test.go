package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const (
	// masterKey is the only key the gateway accepts from clients.
	masterKey = "sk-tg-sdk-test-master-4f1c9a2e7b"
	// upstreamKey is the gateway's own credential for both fake upstreams.
	upstreamKey = "upstream-secret"
	// unreachable is a base URL nothing listens on, for providers a test
	// does not use.
	unreachable = "http://127.0.0.1:1"

	anthropicUpstreamModel = "claude-sonnet-4-5-20250929"
	openAIUpstreamModel    = "gpt-4o-2024-08-06"

	callTimeout = 30 * time.Second
)

const configTemplate = `
providers:
  - { name: ant, type: anthropic, base_url: %q, api_key: %q }
  - { name: oai, type: openai, base_url: %q, api_key: %q }
  - { name: demo, type: echo }
models:
  - { name: claude-test, aliases: [anthropic/claude-test], targets: [ { provider: ant, model: %s } ] }
  - { name: gpt-test, targets: [ { provider: oai, model: %s } ] }
  - { name: echo, targets: [ { provider: demo } ] }
`

// configuredModels is what GET /v1/models must list, in configuration
// order, aliases after their model.
var configuredModels = []string{"claude-test", "anthropic/claude-test", "gpt-test", "echo"}

// startGateway runs the whole gateway in process on a loopback listener and
// returns its URL. ant and oai are the fake upstreams behind the anthropic
// and openai providers; nil means the provider points nowhere.
func startGateway(t *testing.T, ant, oai *upstreamtest.Server) string {
	t.Helper()
	antURL, oaiURL := unreachable, unreachable+"/v1"
	if ant != nil {
		antURL = ant.URL
	}
	if oai != nil {
		oaiURL = oai.URL + "/v1"
	}
	return gatewaytest.Start(t, fmt.Sprintf(configTemplate, antURL, upstreamKey, oaiURL, upstreamKey, anthropicUpstreamModel, openAIUpstreamModel), masterKey)
}

// newUpstream starts a fake upstream closed when the test ends.
func newUpstream(t *testing.T, reply func(upstreamtest.Received) upstreamtest.Reply) *upstreamtest.Server {
	t.Helper()
	s := upstreamtest.New(reply)
	t.Cleanup(s.Close)
	return s
}

// staticUpstream starts a fake upstream that always answers rep.
func staticUpstream(t *testing.T, rep upstreamtest.Reply) *upstreamtest.Server {
	t.Helper()
	return newUpstream(t, func(upstreamtest.Received) upstreamtest.Reply { return rep })
}

// unusedUpstream starts a fake upstream that no request should reach.
func unusedUpstream(t *testing.T) *upstreamtest.Server {
	t.Helper()
	return staticUpstream(t, upstreamtest.Reply{Status: http.StatusTeapot, Body: []byte(`{"error":"this upstream must not be called"}`)})
}

// onlyRequest returns the single request s received, failing otherwise.
func onlyRequest(t *testing.T, s *upstreamtest.Server) upstreamtest.Received {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream received %d requests, want exactly 1", len(reqs))
	}
	return reqs[0]
}

func noRequests(t *testing.T, s *upstreamtest.Server) {
	t.Helper()
	if n := len(s.Requests()); n != 0 {
		t.Errorf("upstream received %d requests, want none", n)
	}
}

func callContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// clientCapture is an SDK middleware (both SDKs use the same signature)
// that records the last request exactly as the SDK sent it.
type clientCapture struct {
	mu     sync.Mutex
	header http.Header
	body   []byte
	n      int
}

func (c *clientCapture) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	c.mu.Lock()
	c.header, c.body = req.Header.Clone(), body
	c.n++
	c.mu.Unlock()
	return next(req)
}

// sent returns the last request the SDK sent, failing unless it sent exactly one.
func (c *clientCapture) sent(t *testing.T) (http.Header, []byte) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n != 1 {
		t.Fatalf("the SDK sent %d requests, want exactly 1", c.n)
	}
	return c.header, c.body
}

// replaceModel returns body with its single "model":"from" member turned
// into "model":"to", which is all the pass-through lane may change.
func replaceModel(t *testing.T, body []byte, from, to string) []byte {
	t.Helper()
	old := []byte(`"model":` + strconv.Quote(from))
	if n := bytes.Count(body, old); n != 1 {
		t.Fatalf("client body has %d occurrences of %s, want 1: %s", n, old, body)
	}
	return bytes.Replace(body, old, []byte(`"model":`+strconv.Quote(to)), 1)
}

// assertBodyPassedThrough checks that the upstream got the client's bytes
// with only the model rewritten.
func assertBodyPassedThrough(t *testing.T, clientBody, upstreamBody []byte, clientModel, upstreamModel string) {
	t.Helper()
	want := replaceModel(t, clientBody, clientModel, upstreamModel)
	if !bytes.Equal(upstreamBody, want) {
		t.Errorf("upstream body differs from the client's beyond the model:\n got: %s\nwant: %s", upstreamBody, want)
	}
}

// assertNoClientKey checks that the client's key did not leak upstream.
func assertNoClientKey(t *testing.T, rec upstreamtest.Received) {
	t.Helper()
	for name, values := range rec.Header {
		for _, v := range values {
			if strings.Contains(v, masterKey) {
				t.Errorf("upstream header %s carries the client's key: %q", name, v)
			}
		}
	}
	if bytes.Contains(rec.Body, []byte(masterKey)) {
		t.Errorf("upstream body carries the client's key: %s", rec.Body)
	}
}

// jsonMembers decodes a JSON object into its raw members.
func jsonMembers(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, b)
	}
	return m
}

// assertSameJSON compares two JSON texts by value.
func assertSameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: got invalid JSON %q: %v", what, got, err)
		return
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want is invalid JSON %q: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: got %s, want %s", what, got, want)
	}
}

// sseEventNames lists the "event:" names of a transcript's events, minus skip.
func sseEventNames(name string, skip ...string) []string {
	var out []string
	for _, ev := range upstreamtest.Events(name) {
		for _, line := range strings.Split(string(ev), "\n") {
			if n, ok := strings.CutPrefix(line, "event:"); ok {
				n = strings.TrimSpace(n)
				skipped := false
				for _, s := range skip {
					skipped = skipped || s == n
				}
				if !skipped {
					out = append(out, n)
				}
			}
		}
	}
	return out
}
