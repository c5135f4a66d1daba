//go:build linux

// Package claudecode_test signs the real Claude Code CLI in to the gateway
// as a developer would and runs it through the gateway with that session:
// the managed settings force sign-in at the gateway, /login on a
// pseudo-terminal runs the OAuth device flow, whose browser leg goes
// through the company's identity provider (a fake one, on another site),
// then claude -p asks a scripted Anthropic upstream for a Bash tool round
// trip. The gateway must apply the team's managed settings, refresh the
// session's short-lived token, refuse a model the team may not use, and
// attribute every request to the developer and their team.
//
// The test needs the CLI: TOLLGATE_TEST_CLAUDE_CODE names its claude
// binary (.ci/run installs the pinned @anthropic-ai/claude-code and sets
// it); without it the test is skipped, and fails when CI=true. It also
// needs root, to give the CLI a mount namespace whose
// /etc/claude-code/managed-settings.json (a path fixed in the binary) is
// the test's.
package claudecode_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const (
	// command is what the scripted model asks the CLI to run; tee makes
	// its output both a file and the tool's result.
	command = "echo hello-from-claude-code | tee out.txt"
	answer  = "Wrote out.txt."
)

// answersTool reports whether the last message of r carries a tool
// result (the system prompt mentions tool results, so a mere match in the
// body is not enough).
func answersTool(r upstreamtest.Received) bool {
	return strings.Contains(gjson.GetBytes(r.Body, "messages.@reverse.0").Raw, `"tool_result"`)
}

// agentTurn reports whether r is a turn of the agent's loop, which offers
// tools, rather than a background request such as the session's title.
func agentTurn(r upstreamtest.Received) bool {
	return upstreamtest.Dialect(r) == "messages" && len(gjson.GetBytes(r.Body, "tools").Array()) > 0
}

// scriptedUpstream is the model: it calls Bash, answers once the result
// comes, and gives background requests a line of text. It keeps no state:
// each request says which turn it is.
func scriptedUpstream(t *testing.T) *upstreamtest.Server {
	s := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		usage := upstreamtest.Usage{Input: 900, Cached: 600, Output: 20}
		switch {
		case !agentTurn(r):
			return upstreamtest.Turn{Text: []string{"Create out.txt"}, Usage: usage}.Reply(r)
		case answersTool(r):
			return upstreamtest.Turn{Text: []string{"Wrote ", "out.txt."}, Usage: usage}.Reply(r)
		}
		args, _ := json.Marshal(map[string]string{"command": command, "description": "Write out.txt"})
		return upstreamtest.Turn{Usage: usage, Calls: []upstreamtest.Call{{ID: "toolu_01ClaudeCode", Name: "Bash", Args: string(args)}}}.Reply(r)
	})
	t.Cleanup(s.Close)
	return s
}

// The gateway's models: the team may use managedModel, which its managed
// settings make the CLI's model; deniedModel (the CLI's own default) is
// served to others only.
const (
	managedModel = "claude-sonnet-4-6"
	deniedModel  = "claude-opus-4-7"
	upstreamKey  = "upstream-secret"
)

func TestClaudeCodeGatewaySignIn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI: go test without -short runs it")
	}
	bin := gatewaytest.Require(t, "TOLLGATE_TEST_CLAUDE_CODE", "it names the claude binary of @anthropic-ai/claude-code, which .ci/run installs (pinned)")
	if os.Geteuid() != 0 {
		gatewaytest.Missing(t, "not root: the test gives the CLI its managed settings in a mount namespace of its own, which needs root")
	}
	up := scriptedUpstream(t)
	gw := startGateway(t, up)
	c := newClient(t, bin, gw.url)
	br := newBrowser()

	verification, final := c.login(t, br)
	if verification.url.Path != "/oauth/device" || verification.url.Host != gw.host() {
		t.Errorf("the CLI opened %s, want the gateway's /oauth/device", verification.url)
	}
	if !strings.Contains(strings.ToLower(final.body), "close this window") || final.url.Host != gw.host() || !strings.Contains(final.body, developer.Email) {
		t.Errorf("the browser ended on %s, not the gateway's page that names the developer and says to close the window:\n%s\n%s", final.url, final.body, br.log())
	}
	creds := c.credentials()
	session := creds.Get("enterpriseGateway")
	if session.Get("url").Str != gw.url || session.Get("jwt").Str == "" || creds.Get(`gatewayTrust.127\.0\.0\.1`).Str != "http-loopback" {
		t.Fatalf("the CLI stored no session with the gateway: %s", creds.Raw)
	}
	signedIn := session.Get("jwt").Str

	events, err := c.print(t, "Create out.txt", "--allowedTools", "Bash")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(c.work, "out.txt")); err != nil || string(got) != "hello-from-claude-code\n" {
		t.Errorf("out.txt: %q, %v: the command did not run", got, err)
	}
	if result := last(events); result.Get("is_error").Bool() || result.Get("result").Str != answer {
		t.Errorf("the CLI's result: %s", result.Raw)
	}
	// The access token lives four minutes, so the CLI refreshed it
	// through the gateway before using it.
	token := c.credentials().Get("enterpriseGateway.jwt").Str
	if token == "" || token == signedIn {
		t.Errorf("the CLI did not refresh its token: %s", c.credentials().Raw)
	}
	var turns []upstreamtest.Received
	for _, r := range up.Requests() {
		// The managed settings chose the model of every request, the
		// background ones too; the upstream sees its own key, never the
		// developer's token.
		if m := gjson.GetBytes(r.Body, "model").Str; m != "up-"+managedModel {
			t.Errorf("the upstream was asked for %s, want up-%s (the team's managed model)", m, managedModel)
		}
		if r.Header.Get("X-Api-Key") != upstreamKey || r.Header.Get("Authorization") != "" {
			t.Errorf("the upstream got x-api-key %q and Authorization %q", r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
		}
		if agentTurn(r) {
			turns = append(turns, r)
		}
	}
	if len(turns) != 2 || !answersTool(turns[1]) || !bytes.Contains(turns[1].Body, []byte("hello-from-claude-code")) {
		t.Fatalf("the upstream got %d agent turns, want the call and its result", len(turns))
	}
	served := len(up.Requests())

	// A model the team may not use is refused before any upstream: the
	// developer asking for it sees the gateway's 400, and the answer is
	// the Anthropic error envelope.
	events, err = c.print(t, "Hello", "--model", deniedModel)
	if result := last(events); err == nil || result.Get("api_error_status").Int() != http.StatusBadRequest {
		t.Errorf("claude -p --model %s: want an API error 400, got %v: %s", deniedModel, err, result.Raw)
	}
	status, body := gw.messages(t, c.credentials().Get("enterpriseGateway.jwt").Str, deniedModel)
	if status != http.StatusBadRequest || gjson.Get(body, "type").Str != "error" || gjson.Get(body, "error.type").Str != "invalid_request_error" {
		t.Errorf("%s for the team: %d %s, want 400 invalid_request_error in the Anthropic envelope", deniedModel, status, body)
	}
	if len(up.Requests()) != served {
		t.Errorf("a refused model reached the upstream")
	}
	gw.checkAttribution(t, served)
}

// last is the last of the CLI's events: its result.
func last(events []gjson.Result) gjson.Result {
	if len(events) == 0 {
		return gjson.Result{}
	}
	return events[len(events)-1]
}
