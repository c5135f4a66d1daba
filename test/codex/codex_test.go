// Package codex_test runs the real Codex CLI (codex exec) against the
// gateway: a model served by Claude, by an OpenAI-compatible chat upstream
// and by a Responses upstream, each scripted to ask for a shell command and
// then to answer. The command must really run and Codex must exit 0.
//
// The test needs the codex binary: TOLLGATE_TEST_CODEX names it (.ci/run
// installs the pinned @openai/codex and sets it); without it the test is
// skipped.
package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const (
	masterKey   = "sk-tg-codex-test-master-7d41c0e9a3"
	upstreamKey = "upstream-secret"
	// command is what the scripted model asks Codex to run.
	command = "echo hello-from-codex > out.txt"
	answer  = "Wrote out.txt."
	// signature is the scripted Claude thinking block's: Codex keeps the
	// reasoning item and must give it back, so Claude gets its block again.
	signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds5+Ypl/ZBRRBLoeMUQ=="
	// geminiSignature is the thought signature on the scripted Gemini's
	// call: Gemini 3 refuses the next turn without it.
	geminiSignature = "CiQBVKhc7sigCodexGemini=="
)

func TestCodexExec(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Codex CLI: go test without -short runs it")
	}
	codex := os.Getenv("TOLLGATE_TEST_CODEX")
	if codex == "" {
		t.Skip("TOLLGATE_TEST_CODEX is not set: it names the codex binary (npm @openai/codex, pinned in .ci/run) this test runs")
	}
	for _, tc := range []struct {
		model    string
		upstream func(t *testing.T) *upstreamtest.Server
		// check inspects the upstream's second request, which carries the
		// command's output.
		check func(t *testing.T, second []byte)
	}{
		{"claude-test", claudeUpstream, func(t *testing.T, second []byte) {
			var req struct {
				Messages []struct {
					Role    string            `json:"role"`
					Content []json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(second, &req); err != nil {
				t.Fatal(err)
			}
			var blocks []string
			for _, m := range req.Messages {
				for _, b := range m.Content {
					blocks = append(blocks, m.Role+" "+string(b))
				}
			}
			all := strings.Join(blocks, "\n")
			thinking := `assistant {"type":"thinking","thinking":"The user wants a file.","signature":"` + signature + `"}`
			if !strings.Contains(all, thinking) || !strings.Contains(all, `"type":"tool_result","tool_use_id":"toolu_01Codex"`) ||
				!strings.Contains(all, "Process exited with code 0") {
				t.Errorf("second request lacks the thinking block or the command's result:\n%s", all)
			}
		}},
		{"gpt-test", chatUpstream, func(t *testing.T, second []byte) {
			if !bytes.Contains(second, []byte(`"role":"tool"`)) || !bytes.Contains(second, []byte(`"tool_call_id":"call_codex1"`)) ||
				!bytes.Contains(second, []byte("Process exited with code 0")) {
				t.Errorf("second request lacks the command's result:\n%s", second)
			}
		}},
		{"gemini-test", geminiUpstream, func(t *testing.T, second []byte) {
			if !bytes.Contains(second, []byte(`"thoughtSignature":"`+geminiSignature+`"`)) || !bytes.Contains(second, []byte(`"functionResponse"`)) ||
				!bytes.Contains(second, []byte("Process exited with code 0")) {
				t.Errorf("second request lacks the signed call or the command's result:\n%s", second)
			}
		}},
		{"codex-test", responsesUpstream, func(t *testing.T, second []byte) {
			if !bytes.Contains(second, []byte(`"type":"function_call_output"`)) || !bytes.Contains(second, []byte(`"model":"gpt-5-codex"`)) {
				t.Errorf("second request is not the client's, model rewritten:\n%s", second)
			}
		}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			up := tc.upstream(t)
			gw := startGateway(t, up)
			work := runCodex(t, codex, gw, tc.model)
			if got, err := os.ReadFile(filepath.Join(work, "out.txt")); err != nil || string(got) != "hello-from-codex\n" {
				t.Errorf("out.txt: %q, %v: the command did not run", got, err)
			}
			reqs := up.Requests()
			if len(reqs) != 2 {
				t.Fatalf("upstream received %d requests, want 2", len(reqs))
			}
			tc.check(t, reqs[1].Body)
		})
	}
}

// runCodex runs codex exec in a fresh working directory with a
// configuration that points it at the gateway, and checks that it ends
// its turn with the scripted answer and exits 0.
func runCodex(t *testing.T, codex, gateway, model string) string {
	t.Helper()
	dir := t.TempDir()
	home, user, work := filepath.Join(dir, "codex-home"), filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{home, user, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`model = %q
model_provider = "tollgate"
approval_policy = "never"
sandbox_mode = "danger-full-access"
web_search = "disabled"

[analytics]
enabled = false

[agents]
enabled = false

[features]
plugins = false
goals = false

[model_providers.tollgate]
name = "tollgate"
base_url = "%s/v1"
env_key = "TOLLGATE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000
`, model, gateway)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	last := filepath.Join(dir, "last.txt")
	cmd := exec.CommandContext(ctx, codex, "exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--json",
		"-o", last, "Create out.txt")
	cmd.Dir = work
	// Codex runs the command in a login shell: an empty HOME keeps the
	// machine user's profile out of it. A profile that takes locks or
	// starts tools (pyenv's rehash waits up to a minute for a lock a killed
	// shell left behind) made the command outlast Codex's 10 s yield, and
	// the model got "still running" instead of the command's result.
	cmd.Env = append(os.Environ(), "HOME="+user, "CODEX_HOME="+home, "TOLLGATE_API_KEY="+masterKey, "NO_COLOR=1")
	cmd.Stdin = nil // codex exec reads stdin when it is not a terminal: give it none
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil || !strings.Contains(stdout.String(), `"type":"turn.completed"`) {
		t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if got, _ := os.ReadFile(last); strings.TrimSpace(string(got)) != answer {
		t.Errorf("last message %q, want %q\nstdout:\n%s", got, answer, stdout.String())
	}
	return work
}

func startGateway(t *testing.T, up *upstreamtest.Server) string {
	t.Helper()
	yaml := fmt.Sprintf(`
providers:
  - { name: ant, type: anthropic, base_url: %[1]q, api_key: %[2]q }
  - { name: oai, type: openai, base_url: "%[1]s/v1", api_key: %[2]q }
  - { name: oair, type: openai-responses, base_url: "%[1]s/v1", api_key: %[2]q }
  - { name: goog, type: gemini, base_url: %[1]q, api_key: %[2]q }
models:
  - { name: claude-test, targets: [ { provider: ant, model: claude-sonnet-4-5 } ] }
  - { name: gpt-test, targets: [ { provider: oai, model: gpt-4o } ] }
  - { name: codex-test, targets: [ { provider: oair, model: gpt-5-codex } ] }
  - { name: gemini-test, targets: [ { provider: goog, model: gemini-3-pro-preview } ] }
`, up.URL, upstreamKey)
	return gatewaytest.Start(t, yaml, masterKey)
}

// scripted starts an upstream that answers first until the request carries
// a tool result (marker), then second.
func scripted(t *testing.T, marker string, first, second []string) *upstreamtest.Server {
	events := func(evs []string) [][]byte {
		out := make([][]byte, len(evs))
		for i, e := range evs {
			out[i] = []byte(e)
		}
		return out
	}
	s := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		if bytes.Contains(r.Body, []byte(marker)) {
			return upstreamtest.Reply{Events: events(second)}
		}
		return upstreamtest.Reply{Events: events(first)}
	})
	t.Cleanup(s.Close)
	return s
}

func claudeUpstream(t *testing.T) *upstreamtest.Server {
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01C\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":900,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n"
	stop := func(reason string) []string {
		return []string{
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" + reason + "\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":30}}\n\n",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		}
	}
	first := append([]string{start,
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"The user wants a file.\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"" + signature + "\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01Codex\",\"name\":\"exec_command\",\"input\":{}}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"cmd\\\": \\\"" + command + "\\\"}\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
	}, stop("tool_use")...)
	second := append([]string{start,
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + answer + "\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
	}, stop("end_turn")...)
	return scripted(t, `"tool_result"`, first, second)
}

func chatUpstream(t *testing.T) *upstreamtest.Server {
	chunk := func(delta string, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\n\n"
	}
	usage := "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":900,\"completion_tokens\":20,\"total_tokens\":920}}\n\n"
	args, _ := json.Marshal(`{"cmd": "` + command + `"}`)
	first := []string{
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_codex1","type":"function","function":{"name":"exec_command","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(args)+`}}]}`, ""),
		chunk(`{}`, "tool_calls"), usage, "data: [DONE]\n\n",
	}
	second := []string{
		chunk(`{"role":"assistant","content":"`+answer+`"}`, ""),
		chunk(`{}`, "stop"), usage, "data: [DONE]\n\n",
	}
	return scripted(t, `"role":"tool"`, first, second)
}

func responsesUpstream(t *testing.T) *upstreamtest.Server {
	ev := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return "event: " + v["type"].(string) + "\ndata: " + string(b) + "\n\n"
	}
	usage := map[string]any{"input_tokens": 900, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 920}
	call := map[string]any{"type": "function_call", "id": "fc_1", "status": "completed", "call_id": "call_1", "name": "exec_command",
		"arguments": `{"cmd": "` + command + `"}`}
	msg := map[string]any{"type": "message", "id": "msg_2", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": answer, "annotations": []any{}}}}
	turn := func(id string, item map[string]any) []string {
		return []string{
			ev(map[string]any{"type": "response.created", "sequence_number": 0, "response": map[string]any{"id": id, "status": "in_progress", "output": []any{}}}),
			ev(map[string]any{"type": "response.output_item.done", "sequence_number": 1, "output_index": 0, "item": item}),
			ev(map[string]any{"type": "response.completed", "sequence_number": 2, "response": map[string]any{"id": id, "status": "completed", "output": []any{item}, "usage": usage}}),
		}
	}
	return scripted(t, `"function_call_output"`, turn("resp_1", call), turn("resp_2", msg))
}

func geminiUpstream(t *testing.T) *upstreamtest.Server {
	usage := `"usageMetadata":{"promptTokenCount":900,"candidatesTokenCount":20,"thoughtsTokenCount":10,"totalTokenCount":930}`
	args, _ := json.Marshal(map[string]string{"cmd": command})
	first := []string{
		`data: {"candidates":[{"content":{"parts":[{"text":"The user wants a file.","thought":true}],"role":"model"},"index":0}],"responseId":"g1"}` + "\n\n",
		`data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"exec_command","args":` + string(args) + `},"thoughtSignature":"` + geminiSignature + `"}],"role":"model"},"finishReason":"STOP","index":0}],` + usage + `,"responseId":"g1"}` + "\n\n",
	}
	second := []string{
		`data: {"candidates":[{"content":{"parts":[{"text":"` + answer + `"}],"role":"model"},"finishReason":"STOP","index":0}],` + usage + `,"responseId":"g2"}` + "\n\n",
	}
	return scripted(t, `"functionResponse"`, first, second)
}
