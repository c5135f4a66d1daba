// Package claudecode_test signs the real Claude Code CLI in to the gateway
// as a developer would and runs it through the gateway with that session:
// the managed settings force sign-in at the gateway, /login on a
// pseudo-terminal runs the OAuth device flow, whose browser leg goes
// through the company's identity provider (a fake one, on another site),
// then claude -p asks a scripted Anthropic upstream for a Bash tool round
// trip. The gateway must apply the team's managed settings and attribute
// every request to the developer and their team.
//
// The test needs the CLI: TOLLGATE_TEST_CLAUDE_CODE names its claude
// binary (.ci/run installs the pinned @anthropic-ai/claude-code and sets
// it); without it the test is skipped, and fails when CI=true. It also
// needs root, to give the CLI a mount namespace whose
// /etc/claude-code/managed-settings.json (a path fixed in the binary) is
// the test's.
package claudecode_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

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
// comes, and gives background requests a line of text.
func scriptedUpstream(t *testing.T) *upstreamtest.Server {
	var mu sync.Mutex
	s := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		mu.Lock()
		defer mu.Unlock()
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
