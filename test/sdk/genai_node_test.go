package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needTool returns the path an environment variable names for an outside
// tool a test runs; without it the test is skipped, except in CI (CI=true)
// where .ci/run installs the tool and a missing one is a failure.
func needTool(t *testing.T, env, what string) string {
	t.Helper()
	p := os.Getenv(env)
	if p != "" {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set: it names %s, which .ci/run installs; CI must run this test", env, what)
	}
	t.Skipf("%s is not set: it names %s (pinned and installed by .ci/run)", env, what)
	return ""
}

// genaiJSUsage is the part of usageMetadata the test checks.
type genaiJSUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
}

// genaiJSResult is what testdata/genai.mjs prints.
type genaiJSResult struct {
	Text         string       `json:"text"`
	FinishReason string       `json:"finishReason"`
	Usage        genaiJSUsage `json:"usage"`
	Chunks       []string     `json:"chunks"`
	StreamUsage  genaiJSUsage `json:"streamUsage"`
	Calls        []struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"calls"`
	Signed            int    `json:"signed"`
	Final             string `json:"final"`
	UnknownModel      any    `json:"unknownModel"`
	RateLimited       any    `json:"rateLimited"`
	RateLimitedStream any    `json:"rateLimitedStream"`
	BadKey            any    `json:"badKey"`
}

// TestGenAIJavaScript drives Google's JavaScript SDK (@google/genai, run
// by node) through each lane: text with a system instruction, a stream, a
// parallel function call round trip (the model turn sent back as the SDK
// gave it), and the statuses of an unknown model, a rate-limited upstream
// and a wrong key.
func TestGenAIJavaScript(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts node once per upstream: go test without -short runs it")
	}
	prefix := needTool(t, "TOLLGATE_TEST_GENAI_JS", "the npm prefix @google/genai is installed under")
	script, err := filepath.Abs("testdata/genai.mjs")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range genaiLaneNames {
		t.Run(name, func(t *testing.T) {
			l := startGenaiLane(t, name)
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", script)
			cmd.Env = append(os.Environ(), "GENAI_JS="+prefix, "GATEWAY="+l.base, "KEY="+masterKey, "MODEL=scripted")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node genai.mjs: %v\n%s", err, stderr.String())
			}
			var got genaiJSResult
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("script output: %v: %s", err, stdout.String())
			}
			if got.Text != "Hello from the scripted model." || got.FinishReason != "STOP" {
				t.Errorf("text %q, finish %q", got.Text, got.FinishReason)
			}
			if got.Usage != (genaiJSUsage{120, 100}) {
				t.Errorf("usage %v", got.Usage)
			}
			if strings.Join(got.Chunks, "") != "Hello from the scripted model." || got.StreamUsage != (genaiJSUsage{120, 100}) {
				t.Errorf("stream chunks %q, usage %v", got.Chunks, got.StreamUsage)
			}
			if len(got.Calls) != 2 || got.Calls[0].Args["city"] != "Paris" || got.Calls[1].Args["city"] != "London" || got.Calls[0].Name != "get_weather" {
				t.Errorf("calls %+v", got.Calls)
			}
			if l.name != "chat" && got.Signed == 0 {
				t.Errorf("no part of the model turn carries a thoughtSignature")
			}
			if got.Final != "Paris is warmer than London." {
				t.Errorf("final %q", got.Final)
			}
			for what, status := range map[string]any{"unknown model": got.UnknownModel, "rate limited": got.RateLimited,
				"rate limited stream": got.RateLimitedStream, "bad key": got.BadKey} {
				want := map[string]float64{"unknown model": 404, "rate limited": 429, "rate limited stream": 429, "bad key": 401}[what]
				if status != want {
					t.Errorf("%s: status %v, want %v", what, status, want)
				}
			}
			reqs := l.up.Requests()
			// text, stream, two tool turns, two rate-limited calls
			if len(reqs) != 6 {
				t.Fatalf("upstream received %d requests, want 6", len(reqs))
			}
			var toolTurn int
			for i, r := range reqs {
				if hasToolResult(r) {
					toolTurn = i
				}
			}
			if toolTurn == 0 {
				t.Fatal("no request carried the function results")
			}
			checkGenaiSecondTurn(t, l.name, nil, []string{"Paris", "London"}, l.name != "gemini", reqs[toolTurn].Body)
		})
	}
}
