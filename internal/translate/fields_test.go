package translate

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// fieldCase checks one decision of testdata/fields.md.
type fieldCase struct {
	row      string // the table row's first cell
	c2m      bool   // a Chat Completions request (else a Messages request)
	caps     Caps
	req      string
	decision string            // translated, passed, dropped, refused, ignored
	param    string            // dropped: the reported name; refused: the error's Param
	message  string            // refused: part of the error message
	always   bool              // dropped: never refused; refused: even under PolicyLenient
	want     map[string]string // gjson path in the upstream request → JSON value
	absent   []string          // gjson paths the upstream request must not have
}

// Requests: a Messages request with extra top-level members, with given
// messages, or with given tools.
func aTop(members string) string {
	return `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],` + members + `}`
}

func aMsgs(msgs string) string { return `{"model":"m","max_tokens":100,"messages":[` + msgs + `]}` }

func aTools(tools string, more ...string) string {
	return aTop(`"tools":[` + tools + `]` + strings.Join(more, ""))
}

// aUser is a Messages request whose user turn has the given blocks.
func aUser(blocks string) string { return aMsgs(`{"role":"user","content":[` + blocks + `]}`) }

// aToolTurn is a tool call and a user turn answering it with the given blocks.
func aToolTurn(blocks string) string {
	return aMsgs(`{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[` + blocks + `]}`)
}

// aHistory is an assistant turn with the given blocks, between user turns.
func aHistory(blocks string) string {
	return aMsgs(`{"role":"user","content":"a"},{"role":"assistant","content":[` + blocks + `]},{"role":"user","content":"b"}`)
}

const pdf = `{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}`

var fieldCases = []fieldCase{
	// Top level.
	{row: "`system`", req: `{"model":"m","max_tokens":9,"system":[{"type":"text","text":"A"},{"type":"text","text":"B"}],"messages":[{"role":"user","content":"hi"}]}`,
		decision: "translated", want: map[string]string{"messages.0": `{"role":"system","content":"A\n\nB"}`}},
	{row: "`metadata.user_id`", req: aTop(`"metadata":{"user_id":"u-1"}`), decision: "translated", want: map[string]string{"user": `"u-1"`}},
	{row: "`stop_sequences`", req: aTop(`"stop_sequences":["END"]`), decision: "translated", want: map[string]string{"stop": `["END"]`}},
	{row: "`stop_sequences`", req: aTop(`"stop_sequences":["1","2","3","4","5"]`), decision: "refused", param: "stop_sequences", message: "at most 4", always: true},
	{row: "`top_k`", req: aTop(`"top_k":5`), decision: "dropped", param: "top_k", absent: []string{"top_k"}},
	{row: "`top_k`", caps: Caps{AcceptsTopK: true}, req: aTop(`"top_k":5`), decision: "passed", want: map[string]string{"top_k": `5`}},
	{row: "`thinking` enabled", req: aTop(`"thinking":{"type":"enabled","budget_tokens":8000}`), decision: "translated", want: map[string]string{"reasoning_effort": `"medium"`}},
	{row: "`thinking` adaptive with `output_config.effort`", req: aTop(`"thinking":{"type":"adaptive"},"output_config":{"effort":"max"}`),
		decision: "translated", want: map[string]string{"reasoning_effort": `"high"`}},
	{row: "`thinking` adaptive with `output_config.effort`", caps: Caps{AcceptsXHigh: true}, req: aTop(`"thinking":{"type":"adaptive"},"output_config":{"effort":"low"}`),
		decision: "translated", want: map[string]string{"reasoning_effort": `"low"`}},
	{row: "`thinking.display`", req: aTop(`"thinking":{"type":"adaptive","display":"summarized"}`), decision: "ignored", absent: []string{"display", "thinking", "reasoning_effort"}},
	{row: "`output_config.format`", req: aTop(`"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}`),
		decision: "translated", want: map[string]string{"response_format": `{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"object"},"strict":true}}`}},
	{row: "`output_config.task_budget`", req: aTop(`"output_config":{"effort":"low","task_budget":{"type":"tokens","total":20000}}`),
		decision: "dropped", param: "output_config.task_budget", want: map[string]string{"reasoning_effort": `"low"`}, absent: []string{"task_budget"}},
	{row: "`service_tier`", req: aTop(`"service_tier":"auto"`), decision: "dropped", param: "service_tier", absent: []string{"service_tier"}},
	{row: "`inference_geo`", req: aTop(`"inference_geo":"us"`), decision: "dropped", param: "inference_geo", absent: []string{"inference_geo"}},
	{row: "`speed`", req: aTop(`"speed":"fast"`), decision: "dropped", param: "speed", absent: []string{"speed"}},
	{row: "`cache_control`", req: aTop(`"cache_control":{"type":"ephemeral"}`), decision: "dropped", param: "cache_control", absent: []string{"cache_control"}},
	{row: "`diagnostics`", req: aTop(`"diagnostics":{"previous_message_id":"msg_1"}`), decision: "dropped", param: "diagnostics", absent: []string{"diagnostics"}},
	{row: "`context_management`", req: aTop(`"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}`), decision: "dropped", param: "context_management", absent: []string{"context_management"}},
	{row: "`compaction`", req: aTop(`"compaction":{"type":"summarize"}`), decision: "dropped", param: "compaction", absent: []string{"compaction"}},
	{row: "`fallbacks`", req: aTop(`"fallbacks":[{"model":"claude-haiku-4-5"}]`), decision: "dropped", param: "fallbacks", absent: []string{"fallbacks"}},
	{row: "`container` empty", req: aTop(`"container":""`), decision: "dropped", param: "container", always: true, absent: []string{"container"}},
	{row: "`container` empty", req: aTop(`"container":null`), decision: "ignored", absent: []string{"container"}},
	{row: "`container`", req: aTop(`"container":{"id":"container_1","skills":[{"type":"anthropic","skill_id":"pptx"}]}`), decision: "refused", param: "container", message: "Anthropic's side"},
	{row: "`container`", req: aTop(`"container":"container_1"`), decision: "refused", param: "container", message: "Anthropic's side"},
	{row: "`mcp_servers`", req: aTop(`"mcp_servers":[{"type":"url","url":"https://mcp.example.com/sse","name":"x"}]`), decision: "refused", param: "mcp_servers", message: "Anthropic's side"},
	{row: "`mcp_servers`", req: aTop(`"mcp_servers":[]`), decision: "ignored", absent: []string{"mcp_servers"}},
	{row: "`betas`, `anthropic_beta`, `anthropic_version`", req: aTop(`"betas":["context-1m-2025-08-07"],"anthropic_beta":["x"],"anthropic_version":"bedrock-2023-05-31"`),
		decision: "dropped", param: "betas", always: true, absent: []string{"betas", "anthropic_beta", "anthropic_version"}},
	{row: "unknown member", req: aTop(`"x_vendor":{"k":1}`), decision: "dropped", param: "x_vendor", absent: []string{"x_vendor"}},

	// Messages.
	{row: "message `role: system`", req: aMsgs(`{"role":"user","content":"a"},{"role":"system","content":[{"type":"text","text":"S1"},{"type":"text","text":"S2"}]}`),
		decision: "translated", want: map[string]string{"messages.#": `2`, "messages.1": `{"role":"system","content":"S1\n\nS2"}`}},
	{row: "message `role: system` between tool calls and their results",
		req:      aMsgs(`{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"system","content":"S"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"},{"type":"text","text":"next"}]}`),
		decision: "translated", want: map[string]string{"messages.#.role": `["user","assistant","tool","system","user"]`, "messages.3.content": `"S"`}},
	{row: "message `role: system` with Caps.LeadingSystemOnly", caps: Caps{LeadingSystemOnly: true},
		req:      aMsgs(`{"role":"system","content":"first"},{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"system","content":"S"},{"role":"user","content":"c"}`),
		decision: "translated", want: map[string]string{"messages.#.role": `["system","user","assistant","user"]`, "messages.3.content": `[{"type":"text","text":"S"},{"type":"text","text":"c"}]`}},
	{row: "message `role: system` with a non-text block", req: aMsgs(`{"role":"user","content":"a"},{"role":"system","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}`),
		decision: "refused", param: "messages[1].content[0]", message: "system messages take text blocks only", always: true},
	{row: "message `clear_at`", req: aMsgs(`{"role":"user","content":"a"},{"role":"system","content":"S","clear_at":"next_user_message"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}`),
		decision: "translated", want: map[string]string{"messages.#.role": `["user","assistant","user"]`}},
	{row: "message `clear_at`", req: aMsgs(`{"role":"user","content":"a"},{"role":"system","content":"S","clear_at":"next_user_message"}`),
		decision: "translated", want: map[string]string{"messages.#.role": `["user","system"]`}},
	{row: "message `output_config`", req: aMsgs(`{"role":"user","content":"a"},{"role":"system","content":"S","output_config":{"effort":"low"}}`),
		decision: "dropped", param: "output_config", want: map[string]string{"messages.1.content": `"S"`}, absent: []string{"reasoning_effort"}},
	{row: "message `cache_control`", req: aMsgs(`{"role":"user","content":"a"},{"role":"system","content":"S","cache_control":{"type":"ephemeral"}}`),
		decision: "dropped", param: "cache_control", absent: []string{"messages.1.cache_control"}},
	{row: "message role other", req: aMsgs(`{"role":"tool","content":"a"}`), decision: "refused", param: "messages[0].role", message: "must be user, assistant or system", always: true},

	// User blocks.
	{row: "`text` block", req: aUser(`{"type":"text","text":"a"},{"type":"text","text":"b"}`), decision: "translated",
		want: map[string]string{"messages.0.content": `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`}},
	{row: "`image` block", req: aUser(`{"type":"image","source":{"type":"url","url":"https://x/y.png"}}`), decision: "translated",
		want: map[string]string{"messages.0.content": `[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]`}},
	{row: "`image` from the Files API", req: aUser(`{"type":"image","source":{"type":"file","file_id":"file_1"}}`), decision: "refused", param: "messages[0].content[0]", message: "Files API"},
	{row: "`document` plain text", req: aUser(`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc"}}`), decision: "translated",
		want: map[string]string{"messages.0.content": `"doc"`}},
	{row: "`document` content source", req: aUser(`{"type":"document","source":{"type":"content","content":[{"type":"text","text":"p1"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}}`),
		decision: "translated", want: map[string]string{"messages.0.content": `[{"type":"text","text":"p1"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]`}},
	{row: "`document` PDF", caps: Caps{FileParts: true}, req: aUser(`{"type":"document","source":` + pdf + `,"title":"a.pdf"}`), decision: "translated",
		want: map[string]string{"messages.0.content.0.file": `{"file_data":"data:application/pdf;base64,JVBERi0=","filename":"a.pdf"}`}},
	{row: "`document` PDF", req: aUser(`{"type":"document","source":` + pdf + `}`), decision: "refused", param: "messages[0].content[0]", message: "PDF"},
	{row: "`document` PDF by URL", req: aUser(`{"type":"document","source":{"type":"url","url":"https://x/a.pdf"}}`), decision: "refused", param: "messages[0].content[0]", message: `"url"`},
	{row: "`citations`", req: aUser(`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc"},"citations":{"enabled":true}}`),
		decision: "dropped", param: "citations", want: map[string]string{"messages.0.content": `"doc"`}},
	{row: "`search_result` block", req: aUser(`{"type":"search_result","source":"https://example.com/a","title":"A","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},{"type":"text","text":"q"}`),
		decision: "translated", want: map[string]string{"messages.0.content": `[{"type":"text","text":"A\nhttps://example.com/a\n\nx\n\ny"},{"type":"text","text":"q"}]`}},
	{row: "`tool_result` block", req: aToolTurn(`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"t"},{"type":"search_result","source":"s","title":"T","content":[{"type":"text","text":"c"}]},{"type":"document","source":{"type":"text","data":"d"}},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}`),
		decision: "translated", want: map[string]string{
			"messages.2": `{"role":"tool","content":"t\nT\ns\n\nc\nd\n[image omitted: see next message]","tool_call_id":"toolu_1"}`,
			"messages.3": `{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}`}},
	{row: "`tool_result` `is_error`", req: aToolTurn(`{"type":"tool_result","tool_use_id":"toolu_1","content":"boom","is_error":true}`), decision: "translated",
		want: map[string]string{"messages.2.content": `"Error: boom"`}},
	{row: "`tool_reference` in a tool result", req: aToolTurn(`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"tool_reference","tool_name":"g"}]}`),
		decision: "dropped", param: "tool_reference", want: map[string]string{"messages.2.content": `""`}},
	{row: "`container_upload` block", req: aUser(`{"type":"container_upload","file_id":"file_1"}`), decision: "refused", param: "messages[0].content[0]", message: "code-execution container"},
	{row: "`tool_addition`, `tool_removal` blocks", req: aUser(`{"type":"text","text":"a"},{"type":"tool_removal","tool":{"type":"tool_reference","name":"f"}}`),
		decision: "refused", param: "messages[0].content[1]", message: "mid-conversation tool changes"},
	{row: "`tool_addition`, `tool_removal` blocks", req: aMsgs(`{"role":"user","content":"a"},{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_reference","name":"f"}}]}`),
		decision: "refused", param: "messages[1].content[0]", message: "mid-conversation tool changes"},
	{row: "block `cache_control`", req: aUser(`{"type":"text","text":"a","cache_control":{"type":"ephemeral","ttl":"1h"}}`), decision: "dropped", param: "cache_control",
		want: map[string]string{"messages.0.content": `"a"`}},

	// Assistant blocks.
	{row: "assistant `text`, `tool_use`", req: aHistory(`{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}`), decision: "translated",
		want: map[string]string{"messages.1": `{"role":"assistant","content":"x","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`}},
	{row: "assistant `thinking`", req: aHistory(`{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"x"}`), decision: "ignored",
		want: map[string]string{"messages.1": `{"role":"assistant","content":"x"}`}},
	{row: "assistant `thinking`", caps: Caps{Reasoning: ReasoningDeepSeek}, req: aHistory(`{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"x"}`),
		decision: "translated", want: map[string]string{"messages.1.reasoning_content": `"hmm"`}},
	{row: "assistant `redacted_thinking`", req: aHistory(`{"type":"redacted_thinking","data":"EmwK"},{"type":"text","text":"x"}`), decision: "dropped", param: "redacted_thinking", always: true,
		want: map[string]string{"messages.1": `{"role":"assistant","content":"x"}`}},
	{row: "assistant `server_tool_use` and server tool results",
		req: aHistory(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},` +
			`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}},` +
			`{"type":"web_fetch_tool_result","tool_use_id":"srvtoolu_2","content":{"type":"web_fetch_result","url":"u","content":{"type":"document","source":{"type":"text","data":"x"}}}},` +
			`{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_3","content":{"type":"code_execution_result","stdout":"","stderr":"","return_code":0,"content":[]}},` +
			`{"type":"mcp_tool_use","id":"mcptoolu_1","name":"n","server_name":"s","input":{}},{"type":"mcp_tool_result","tool_use_id":"mcptoolu_1","content":"r"},` +
			`{"type":"text","text":"found"}`),
		decision: "dropped", param: "web_search_tool_result", always: true, want: map[string]string{"messages.1": `{"role":"assistant","content":"found"}`}},
	{row: "assistant `compaction`",
		req: aMsgs(`{"role":"user","content":"old"},{"role":"assistant","content":"old answer"},{"role":"system","content":"old rule"},{"role":"user","content":"more"},` +
			`{"role":"assistant","content":[{"type":"text","text":"gone"},{"type":"compaction","content":"Summary of the work."},{"type":"text","text":" Next."}]},{"role":"user","content":"go on"}`),
		decision: "translated", want: map[string]string{"messages": `[{"role":"assistant","content":"Summary of the work. Next."},{"role":"user","content":"go on"}]`}},
	{row: "assistant `compaction` without summary text", req: aHistory(`{"type":"compaction","encrypted_content":"Eo8B"}`),
		decision: "refused", param: "messages[1].content[0]", message: "summary text", always: true},

	// Tools.
	{row: "custom tool", req: aTools(`{"name":"f","description":"d","input_schema":{"type":"object","properties":{"a":{"type":"string"}}}},{"type":"custom","name":"g","input_schema":{"type":"object"}}`),
		decision: "translated", want: map[string]string{"tools": `[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}},{"type":"function","function":{"name":"g","parameters":{"type":"object"}}}]`}},
	{row: "tool `strict`", req: aTools(`{"name":"f","input_schema":{"type":"object"},"strict":true}`), decision: "passed", want: map[string]string{"tools.0.function.strict": `true`}},
	{row: "tool `cache_control`", req: aTools(`{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}`), decision: "dropped", param: "cache_control",
		want: map[string]string{"tools.#": `1`}},
	{row: "tool `defer_loading`", req: aTools(`{"name":"f","input_schema":{"type":"object"},"defer_loading":true}`), decision: "dropped", param: "defer_loading",
		want: map[string]string{"tools.0.function.name": `"f"`}},
	{row: "tool `input_examples`", req: aTools(`{"name":"f","input_schema":{"type":"object"},"input_examples":[{"a":1}]}`), decision: "dropped", param: "input_examples",
		want: map[string]string{"tools.0.function.name": `"f"`}},
	{row: "tool `eager_input_streaming`", req: aTools(`{"name":"f","input_schema":{"type":"object"},"eager_input_streaming":true}`), decision: "ignored",
		want: map[string]string{"tools.0.function": `{"name":"f","parameters":{"type":"object"}}`}},
	{row: "tool `allowed_callers` without `direct`", req: aTools(`{"name":"f","input_schema":{"type":"object"},"allowed_callers":["code_execution_20250825"]},{"name":"g","input_schema":{"type":"object"},"allowed_callers":["direct","code_execution_20250825"]}`),
		decision: "dropped", param: "tools[0]", want: map[string]string{"tools.#.function.name": `["g"]`}},
	{row: "tool `memory_20250818`", req: aTools(`{"type":"memory_20250818","name":"memory"}`), decision: "translated",
		want: map[string]string{"tools.0.function.name": `"memory"`, "tools.0.function.parameters.properties.command.enum": `["view","create","str_replace","insert","delete","rename"]`,
			"tools.0.function.parameters.properties.insert_text.type": `"string"`, "tools.0.function.parameters.required": `["command"]`}},
	{row: "tool `bash_20250124`", req: aTools(`{"type":"bash_20250124","name":"bash"}`, `,"tool_choice":{"type":"tool","name":"bash"}`), decision: "translated",
		want: map[string]string{"tools.0.function.name": `"bash"`, "tools.0.function.parameters.properties.command.type": `"string"`,
			"tools.0.function.parameters.properties.restart.type": `"boolean"`, "tool_choice": `{"type":"function","function":{"name":"bash"}}`}},
	{row: "tool `text_editor_*`, `computer_*`", req: aTools(`{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"},{"type":"computer_20250124","name":"computer","display_width_px":1024,"display_height_px":768},{"name":"f","input_schema":{"type":"object"}}`),
		decision: "dropped", param: "tools[1]", want: map[string]string{"tools.#.function.name": `["f"]`}},
	{row: "server tool (`web_search_*`, `web_fetch_*`, `code_execution_*`, `tool_search_tool_*`, `mcp_toolset`)",
		req: aTools(`{"type":"web_search_20250305","name":"web_search","max_uses":5},{"type":"web_fetch_20250910","name":"web_fetch"},{"type":"code_execution_20250825","name":"code_execution"},` +
			`{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"},{"type":"mcp_toolset","mcp_server_name":"s"},{"name":"f","input_schema":{"type":"object"}}`),
		decision: "dropped", param: "tools[0]", want: map[string]string{"tools.#.function.name": `["f"]`}},
	{row: "server tool forced by `tool_choice`", req: aTools(`{"type":"web_search_20250305","name":"web_search"}`, `,"tool_choice":{"type":"tool","name":"web_search"}`),
		decision: "refused", param: "tool_choice", message: `forced tool "web_search"`},
	{row: "`tool_choice`", req: aTools(`{"name":"f","input_schema":{"type":"object"}}`, `,"tool_choice":{"type":"any","disable_parallel_tool_use":true}`), decision: "translated",
		want: map[string]string{"tool_choice": `"required"`, "parallel_tool_calls": `false`}},

	// Chat Completions → Messages.
	{row: "`system` or `developer` message", c2m: true, req: `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"developer","content":"D"},{"role":"assistant","content":"b"},{"role":"system","content":"S"},{"role":"user","content":"c"}]}`,
		decision: "translated", want: map[string]string{"system": `[{"type":"text","text":"D"},{"type":"text","text":"S"}]`, "messages.#.role": `["user","assistant","user"]`}},
	{row: "later `system` or `developer` message with Caps.SystemMessages", c2m: true, caps: Caps{SystemMessages: true},
		req:      `{"model":"m","messages":[{"role":"system","content":"top"},{"role":"user","content":"a"},{"role":"developer","content":"D"},{"role":"assistant","content":"b"},{"role":"system","content":"S"},{"role":"user","content":"c"}]}`,
		decision: "translated", want: map[string]string{"system": `[{"type":"text","text":"top"}]`, "messages.#.role": `["user","system","assistant","user","system"]`,
			"messages.1.content": `[{"type":"text","text":"D"}]`, "messages.4.content": `[{"type":"text","text":"S"}]`}},
	{row: "`moderation`, `prompt_cache_options`", c2m: true, req: `{"model":"m","messages":[{"role":"user","content":"a"}],"moderation":{"input":true},"prompt_cache_options":{"mode":"explicit"}}`,
		decision: "dropped", param: "moderation", absent: []string{"moderation", "prompt_cache_options"}},
}

func translateCase(t *testing.T, tc fieldCase, policy Policy) ([]byte, *Plan, error) {
	t.Helper()
	var out any
	var p *Plan
	var err error
	if tc.c2m {
		var in openai.ChatRequest
		if err := jsonx.Unmarshal([]byte(tc.req), &in); err != nil {
			t.Fatalf("request does not decode: %v", err)
		}
		out, p, err = ChatToMessages(&in, "u", tc.caps, policy, goldenSigner)
	} else {
		var in anthropic.MessagesRequest
		if err := jsonx.Unmarshal([]byte(tc.req), &in); err != nil {
			t.Fatalf("request does not decode: %v", err)
		}
		out, p, err = MessagesToChat(&in, "u", tc.caps, policy, goldenSigner)
	}
	if err != nil {
		return nil, nil, err
	}
	b, merr := jsonx.Marshal(out)
	if merr != nil {
		t.Fatalf("translated request does not encode: %v", merr)
	}
	return b, p, nil
}

func sameJSON(a, b string) bool {
	va, vb := jsontext.Value(a), jsontext.Value(b)
	if va.Canonicalize() != nil || vb.Canonicalize() != nil {
		return false
	}
	return bytes.Equal(va, vb)
}

// TestFieldDecisions checks every decision of testdata/fields.md.
func TestFieldDecisions(t *testing.T) {
	for _, tc := range fieldCases {
		t.Run(tc.row, func(t *testing.T) {
			up, p, err := translateCase(t, tc, PolicyDefault)
			var re *RequestError
			if tc.decision == "refused" {
				if !errors.As(err, &re) {
					t.Fatalf("got %v, want a RequestError", err)
				}
				if re.Param != tc.param || !strings.Contains(re.Message, tc.message) {
					t.Errorf("got param %q message %q, want param %q and a message with %q", re.Param, re.Message, tc.param, tc.message)
				}
				if !strings.HasPrefix(re.Message, tc.param+": ") {
					t.Errorf("message %q does not start with the member's path %q", re.Message, tc.param)
				}
				_, lp, lerr := translateCase(t, tc, PolicyLenient)
				switch {
				case tc.always && lerr == nil:
					t.Errorf("lenient policy: translated, want it refused still")
				case !tc.always && lerr != nil:
					t.Errorf("lenient policy: %v, want it dropped", lerr)
				case !tc.always && !slices.Contains(lp.Dropped(), tc.param):
					t.Errorf("lenient policy: dropped %q, want %q listed", lp.Dropped(), tc.param)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			for path, want := range tc.want {
				got := gjson.GetBytes(up, path)
				if !got.Exists() || !sameJSON(got.Raw, want) {
					t.Errorf("upstream %s: got %s, want %s\n%s", path, got.Raw, want, up)
				}
			}
			for _, path := range tc.absent {
				if got := gjson.GetBytes(up, path); got.Exists() {
					t.Errorf("upstream %s: got %s, want it absent", path, got.Raw)
				}
			}
			switch tc.decision {
			case "dropped":
				if !slices.Contains(p.Dropped(), tc.param) {
					t.Errorf("dropped: got %q, want %q listed", p.Dropped(), tc.param)
				}
				_, _, serr := translateCase(t, tc, PolicyStrict)
				if tc.always && serr != nil {
					t.Errorf("strict policy: %v, want it dropped still", serr)
				}
				if !tc.always && !errors.As(serr, &re) {
					t.Errorf("strict policy: got %v, want a RequestError", serr)
				}
			case "ignored":
				if len(p.Dropped()) > 0 {
					t.Errorf("dropped: got %q, want nothing reported", p.Dropped())
				}
			case "translated", "passed":
			default:
				t.Fatalf("unknown decision %q", tc.decision)
			}
		})
	}
}

// TestFieldDecisionsDocumented keeps testdata/fields.md and fieldCases in
// step: every row has a case with the row's decision (other cases show
// what a capability or an edge changes), every case a row.
func TestFieldDecisionsDocumented(t *testing.T) {
	doc, err := os.ReadFile("testdata/fields.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // first cell → decision
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Member ") {
			continue
		}
		rows[strings.TrimSpace(cells[1])] = strings.TrimSpace(cells[2])
	}
	cases := map[string]bool{} // row → a case has the row's own decision
	for _, tc := range fieldCases {
		decision, ok := rows[tc.row]
		if !ok {
			t.Errorf("case %q has no row in fields.md", tc.row)
			continue
		}
		cases[tc.row] = cases[tc.row] || decision == tc.decision
	}
	for row, decision := range rows {
		if !cases[row] {
			t.Errorf("row %q of fields.md has no case deciding %q", row, decision)
		}
	}
}
