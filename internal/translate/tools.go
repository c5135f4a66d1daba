package translate

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
)

// definedTool is an Anthropic-defined tool that the client runs itself, so
// an OpenAI-compatible model can call it as a function with the same
// name and input: its schema is written out here, since Anthropic models
// carry it built in.
type definedTool struct {
	name, description string
	schema            jsontext.Value
}

// definedTools are keyed by type prefix (the versions share a schema).
// Input fields follow anthropic-sdk-go's BetaMemoryTool20250818*Command
// types and the bash tool's command/restart.
var definedTools = map[string]definedTool{
	"memory_": {"memory",
		"Keep and consult files in the /memories directory that persist across conversations: view a file or directory, create, str_replace, insert, delete or rename a file.",
		jsontext.Value(`{"type":"object","properties":{` +
			`"command":{"type":"string","enum":["view","create","str_replace","insert","delete","rename"]},` +
			`"path":{"type":"string","description":"File or directory, under /memories (all commands but rename)"},` +
			`"view_range":{"type":"array","items":{"type":"integer"},"description":"view: first and last line to show"},` +
			`"file_text":{"type":"string","description":"create: the file's content"},` +
			`"old_str":{"type":"string","description":"str_replace: the exact text to replace"},` +
			`"new_str":{"type":"string","description":"str_replace: the text to put instead"},` +
			`"insert_line":{"type":"integer","description":"insert: the line after which to insert (0: at the start)"},` +
			`"insert_text":{"type":"string","description":"insert: the text to insert"},` +
			`"old_path":{"type":"string","description":"rename: the current path"},` +
			`"new_path":{"type":"string","description":"rename: the new path"}},` +
			`"required":["command"]}`)},
	"bash_": {"bash",
		"Run a command in a persistent bash shell.",
		jsontext.Value(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The bash command to run"},` +
			`"restart":{"type":"boolean","description":"Restart the shell instead of running a command"}}}`)},
}

// serverToolPrefixes are tool types Anthropic runs on its side.
var serverToolPrefixes = []string{"web_search_", "web_fetch_", "code_execution_", "tool_search_tool_", "mcp_toolset", "advisor_"}

// functionFor is the function definition for a tool, or nil and why the
// upstream cannot get it.
func functionFor(t anthropic.Tool) (*openai.Function, string) {
	if t.Type == "" || t.Type == "custom" {
		params := t.InputSchema
		if len(params) == 0 {
			params = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		return &openai.Function{Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict}, ""
	}
	for prefix, d := range definedTools {
		if strings.HasPrefix(t.Type, prefix) {
			name := t.Name
			if name == "" {
				name = d.name
			}
			return &openai.Function{Name: name, Description: d.description, Parameters: d.schema, Strict: t.Strict}, ""
		}
	}
	for _, prefix := range serverToolPrefixes {
		if strings.HasPrefix(t.Type, prefix) {
			return nil, fmt.Sprintf("server tool %q runs on Anthropic's side", t.Type)
		}
	}
	return nil, fmt.Sprintf("tool %q is defined inside Anthropic's models; this model's upstream has no definition of it", t.Type)
}
