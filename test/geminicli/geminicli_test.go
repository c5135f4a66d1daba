// Package geminicli_test runs the real Gemini CLI (gemini -p) against the
// gateway's Gemini API: a model served by Gemini, by Claude and by a Chat
// Completions upstream, each scripted to call run_shell_command and then
// to answer, and the CLI's own default models (its routing classifier
// included) served by Claude. The command must really run, its output must
// reach the model, and the CLI must exit 0 with the scripted answer.
//
// The test needs the CLI: TOLLGATE_TEST_GEMINI_CLI names its gemini
// script (.ci/run installs the pinned @google/gemini-cli and sets it);
// without it the test is skipped, and fails when CI=true.
package geminicli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const (
	masterKey   = "sk-tg-geminicli-test-master-5e2b8d1f06"
	upstreamKey = "upstream-secret"
	// command is what the scripted model asks the CLI to run; tee makes
	// its output both a file and the tool's result.
	command = "echo hello-from-gemini-cli | tee out.txt"
	answer  = "Wrote out.txt."
	// thinking and signature are the scripted model's reasoning before
	// the call: Claude must get the block back, Gemini 3 its signature.
	thinking  = "The user wants a file."
	signature = "EqQBCgIYAhIMZ2VtaW5pLWNsaS10aGlua2luZy1zaWduYXR1cmUtZm9yLXRvbGxnYXRl"
)

// defaultModels are the models Gemini CLI 0.61 asks for when it is given
// no -m: its main models and the lite model of its routing classifier.
var defaultModels = []string{"gemini-3.1-pro-preview", "gemini-3.1-pro-preview-customtools", "gemini-3.8-flash", "gemini-3.5-flash-lite"}

func TestGeminiCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI: go test without -short runs it")
	}
	cli := gatewaytest.Require(t, "TOLLGATE_TEST_GEMINI_CLI", "it names the gemini script of @google/gemini-cli, which .ci/run installs (pinned)")
	for _, tc := range []struct {
		name     string
		provider string // the upstream's provider entry, %[1]s its URL, %[2]s its key
		model    string // -m; empty: the CLI's defaults
	}{
		{"gemini", `{ name: up, type: gemini, base_url: %[1]q, api_key: %[2]q }`, "gemini-lane"},
		{"messages", `{ name: up, type: anthropic, base_url: %[1]q, api_key: %[2]q }`, "claude-lane"},
		{"chat", `{ name: up, type: openai, base_url: "%[1]s/v1", api_key: %[2]q }`, "chat-lane"},
		{"messages/default-models", `{ name: up, type: anthropic, base_url: %[1]q, api_key: %[2]q }`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := scriptedUpstream(t)
			models := []string{tc.model}
			if tc.model == "" {
				models = defaultModels
			}
			yaml := "providers:\n  - " + fmt.Sprintf(tc.provider, up.URL, upstreamKey) + "\nmodels:\n"
			for _, m := range models {
				// Each model's upstream name says which one the CLI asked for.
				yaml += fmt.Sprintf("  - { name: %s, targets: [ { provider: up, model: up-%[1]s } ] }\n", m)
			}
			gw := gatewaytest.Start(t, yaml, masterKey)
			work, out := runCLI(t, cli, gw, tc.model)
			if got, err := os.ReadFile(filepath.Join(work, "out.txt")); err != nil || string(got) != "hello-from-gemini-cli\n" {
				t.Errorf("out.txt: %q, %v: the command did not run", got, err)
			}
			if out.Get("response").Str != answer {
				t.Errorf("the CLI answered %q, want %q", out.Get("response").Str, answer)
			}
			var calls, results []upstreamtest.Received
			for _, r := range up.Requests() {
				switch {
				case isClassifier(r):
				case answersTool(r):
					results = append(results, r)
				default:
					calls = append(calls, r)
				}
			}
			if len(calls) != 1 || len(results) != 1 {
				t.Fatalf("upstream got %d turns asking and %d carrying the result, want 1 and 1", len(calls), len(results))
			}
			second := results[0].Body
			if !bytes.Contains(second, []byte("hello-from-gemini-cli")) {
				t.Errorf("the command's output did not reach the model: %s", second)
			}
			switch upstreamtest.Dialect(results[0]) {
			case "gemini":
				if !bytes.Contains(second, []byte(`"thoughtSignature":"`+signature+`"`)) {
					t.Errorf("Gemini did not get its thought signature back: %s", second)
				}
			case "messages":
				block := `{"type":"thinking","thinking":"` + thinking + `","signature":"` + signature + `"}`
				if !bytes.Contains(second, []byte(block)) {
					t.Errorf("Claude did not get its thinking block back byte for byte: %s", second)
				}
			}
			if tc.model == "" {
				checkDefaultModels(t, out, up)
			}
		})
	}
}

// checkDefaultModels: without -m the CLI asked its classifier (the lite
// model, with a JSON schema in upper-case Gemini types) and then one of its
// main models; both were served through the gateway.
func checkDefaultModels(t *testing.T, out gjson.Result, up *upstreamtest.Server) {
	t.Helper()
	var asked []string
	for _, r := range up.Requests() {
		body := gjson.ParseBytes(r.Body)
		if !isClassifier(r) {
			asked = append(asked, body.Get("model").Str)
			continue
		}
		if m := body.Get("model").Str; m != "up-gemini-3.5-flash-lite" {
			t.Errorf("the classifier asked %s", m)
		}
		// Structured output, or a forced tool whose input is the answer.
		schema := body.Get("output_config.format.schema")
		if name := body.Get("tool_choice.name").Str; body.Get("tool_choice.type").Str == "tool" {
			for _, tool := range body.Get("tools").Array() {
				if tool.Get("name").Str == name {
					schema = tool.Get("input_schema")
				}
			}
		}
		if schema.Get("type").Str != "object" || schema.Get("properties.complexity_score.type").Str != "integer" {
			t.Errorf("the classifier's schema did not reach Claude as a JSON Schema: %s", r.Body)
		}
	}
	t.Logf("main model requests: %v", asked)
	for _, m := range asked {
		if !slices.Contains(defaultModels[:3], strings.TrimPrefix(m, "up-")) {
			t.Errorf("the CLI asked %s, not one of its main models", m)
		}
	}
	for name, m := range out.Get("stats.models").Map() {
		if m.Get("api.totalErrors").Int() != 0 {
			t.Errorf("model %s: %d errors", name, m.Get("api.totalErrors").Int())
		}
	}
}

// isClassifier reports whether r is the CLI's routing classifier request.
func isClassifier(r upstreamtest.Received) bool {
	return bytes.Contains(r.Body, []byte("complexity_score"))
}

// answersTool reports whether the last message of r carries a tool result
// (the CLI's system prompt mentions function responses, so a mere match
// in the body is not enough).
func answersTool(r upstreamtest.Received) bool {
	body := gjson.ParseBytes(r.Body)
	switch upstreamtest.Dialect(r) {
	case "gemini":
		return strings.Contains(body.Get("contents.@reverse.0").Raw, `"functionResponse"`)
	case "messages":
		return strings.Contains(body.Get("messages.@reverse.0").Raw, `"tool_result"`)
	case "chat":
		return body.Get("messages.@reverse.0.role").Str == "tool"
	}
	return false
}

// scriptedUpstream is the model: it rates the classifier's prompt, calls
// run_shell_command with reasoning first, and answers once the result
// comes, in whichever protocol it is asked.
func scriptedUpstream(t *testing.T) *upstreamtest.Server {
	var mu sync.Mutex
	s := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		usage := upstreamtest.Usage{Input: 900, Cached: 600, Output: 20}
		switch {
		case isClassifier(r):
			rating := `{"complexity_reasoning":"One shell command.","complexity_score":80}`
			if forced := gjson.GetBytes(r.Body, "tool_choice"); forced.Get("type").Str == "tool" {
				return upstreamtest.Turn{Calls: []upstreamtest.Call{{ID: "toolu_01Rating", Name: forced.Get("name").Str, Args: rating}}, Usage: usage}.Reply(r)
			}
			return upstreamtest.Turn{Text: []string{rating}, Usage: usage}.Reply(r)
		case answersTool(r):
			return upstreamtest.Turn{Text: []string{"Wrote ", "out.txt."}, Usage: usage}.Reply(r)
		}
		id := "toolu_01GeminiCLI"
		if upstreamtest.Dialect(r) == "gemini" {
			id = ""
		}
		args, _ := json.Marshal(map[string]string{"command": command, "description": "Write out.txt"})
		return upstreamtest.Turn{Thinking: thinking, Signature: signature, Usage: usage,
			Calls: []upstreamtest.Call{{ID: id, Name: "run_shell_command", Args: string(args)}}}.Reply(r)
	})
	t.Cleanup(s.Close)
	return s
}

// runCLI runs gemini -p in a fresh working directory and HOME whose
// settings point it at the gateway with an API key, with telemetry and
// update checks off, tools approved (yolo), and checks it exits 0; it
// returns the working directory and the CLI's JSON output.
func runCLI(t *testing.T, cli, gateway, model string) (string, gjson.Result) {
	t.Helper()
	dir := t.TempDir()
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{filepath.Join(home, ".gemini"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// One attempt per request: the CLI retries an error up to ten times
	// with backoff, which turns a failing test into minutes of waiting.
	settings := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false, "enableAutoUpdateNotification": false,
    "maxAttempts": 1, "retryFetchErrors": false}
}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"-p", "Create out.txt", "--approval-mode", "yolo", "--skip-trust", "-o", "json"}
	if model != "" {
		args = append(args, "-m", model)
	}
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Dir = work
	env := []string{"HOME=" + home, "TMPDIR=" + dir, "GOOGLE_GEMINI_BASE_URL=" + gateway, "GEMINI_API_KEY=" + masterKey, "NO_COLOR=1"}
	for _, e := range os.Environ() {
		// The machine's own Google settings must not reach the CLI; its
		// error reports go to the test's directory.
		if name, _, _ := strings.Cut(e, "="); !strings.HasPrefix(name, "GOOGLE_") && !strings.HasPrefix(name, "GEMINI_") && name != "HOME" && name != "TMPDIR" {
			env = append(env, e)
		}
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gemini: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), head(stderr.String(), 40))
	}
	if !gjson.Valid(stdout.String()) {
		t.Fatalf("gemini -o json printed no JSON:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	return work, gjson.Parse(stdout.String())
}

// head is the first n lines of s: the CLI prints a stack trace per error.
func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines[n] = "[...]"
	}
	return strings.Join(lines, "\n")
}
