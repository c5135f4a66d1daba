package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// noteHook is a request-lifecycle hook on the Chat Completions dialect:
// it refuses a request that asks it to, puts a system message before
// every conversation, marks the answers it sees, and serves
// GET /v1/notes/{id}.
type noteHook struct{ owners []string }

type noteTurn struct {
	body   []byte
	scan   dialect.Scanned
	target dialect.AttemptTarget
}

func (h *noteHook) Begin(_ context.Context, r *dialect.TurnRequest) (dialect.Turn, error) {
	h.owners = append(h.owners, r.Owner)
	if gjson.GetBytes(r.Body, "metadata.refuse").Exists() {
		return nil, &dialect.Refusal{Status: http.StatusConflict, Kind: dialect.InvalidRequest, Param: "metadata.refuse", Code: "refused",
			Message: "metadata.refuse: refused", Header: http.Header{"X-Note": {"refused"}}}
	}
	body, err := sjson.SetRawBytes(r.Body, "messages.-1", []byte(`{"role":"user","content":"noted"}`))
	if err != nil {
		return nil, err
	}
	s, err := dialect.Scan(body, &dialect.Chat.Fields)
	if err != nil {
		return nil, err
	}
	r.Body, r.Scan = body, s
	return &noteTurn{body: body, scan: s}, nil
}

func (h *noteHook) Routes() []dialect.Route {
	return []dialect.Route{{Pattern: "/v1/notes/{id}", Serve: func(r *http.Request, owner string) (int, []byte, error) {
		if r.PathValue("id") == "missing" {
			return 0, nil, &dialect.Refusal{Status: http.StatusNotFound, Kind: dialect.NotFound, Message: "note missing not found"}
		}
		return http.StatusOK, []byte(`{"id":"` + r.PathValue("id") + `","owner":"` + owner + `"}`), nil
	}}}
}

func (t *noteTurn) Attempt(a dialect.AttemptTarget) (dialect.AttemptBody, error) {
	t.target = a
	return dialect.AttemptBody{Body: t.body, Scan: t.scan}, nil
}
func (t *noteTurn) Affinity() affinity.Key { return 0 }
func (t *noteTurn) Keeps() bool            { return true }
func (t *noteTurn) Answer(body []byte, _ bool) []byte {
	out, _ := sjson.SetBytes(body, "noted_by", t.target.Name)
	return out
}
func (t *noteTurn) Stream(tap dialect.Tap) dialect.Tap { return tap }
func (t *noteTurn) Ended()                             {}

// The gateway drives a dialect's hook without knowing it: the hook's
// body reaches the upstream, its refusal reaches the client in the
// dialect's envelope with its status, code, param and headers, it sees
// the answer first, and its routes are served with the gateway's
// authentication and error envelopes.
func TestLifecycleHook(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	t.Cleanup(up.Close)
	cfg, err := config.Parse([]byte(`
providers:
  - { name: oai, type: openai, base_url: "`+up.URL+`/v1", api_key: "`+upstreamKey+`" }
models:
  - { name: gpt-x, targets: [ { provider: oai, model: gpt-upstream-id } ] }
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	hook := &noteHook{}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.DiscardHandler),
		Lifecycles: map[*dialect.Dialect]dialect.Lifecycle{dialect.Chat: hook}})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(built.Handler)
	t.Cleanup(func() { gw.Close(); built.Close() })
	e := &env{t: t, gw: gw, logs: &syncBuffer{}}

	got := e.call("POST", "/v1/chat/completions", `{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}`, masterKey)
	if sent := up.Last().Body; got.status != 200 || gjson.GetBytes(sent, "messages.1.content").Str != "noted" ||
		gjson.GetBytes(sent, "model").Str != "gpt-upstream-id" || gjson.Get(got.body, "noted_by").Str != "oai/gpt-upstream-id" {
		t.Errorf("the hook's body and answer: %d %s; upstream got %s", got.status, got.body, sent)
	}
	if len(hook.owners) != 1 || hook.owners[0] != "" {
		t.Errorf("owners %q, want the master key's", hook.owners)
	}

	sent := len(up.Requests())
	resp := e.do("POST", "/v1/chat/completions", `{"model":"gpt-x","metadata":{"refuse":true},"messages":[{"role":"user","content":"hi"}]}`, openAIAuth...)
	body := string(readAll(t, resp.Body))
	resp.Body.Close()
	if resp.StatusCode != 409 || resp.Header.Get("X-Note") != "refused" || gjson.Get(body, "error.code").Str != "refused" ||
		gjson.Get(body, "error.param").Str != "metadata.refuse" || gjson.Get(body, "error.type").Str != "invalid_request_error" ||
		len(up.Requests()) != sent {
		t.Errorf("a refusal: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	if got := e.call("GET", "/v1/notes/n1", "", masterKey); got.status != 200 || got.body != `{"id":"n1","owner":""}` {
		t.Errorf("the hook's route: %d %s", got.status, got.body)
	}
	if got := e.call("GET", "/v1/notes/missing", "", masterKey); got.status != 404 || !strings.Contains(gjson.Get(got.body, "error.message").Str, "not found") {
		t.Errorf("the hook's route refusing: %d %s", got.status, got.body)
	}
	if got := e.call("GET", "/v1/notes/n1", "", "sk-wrong"); got.status != 401 {
		t.Errorf("the hook's route without a key: %d %s", got.status, got.body)
	}
}
