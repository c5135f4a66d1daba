package translate

import (
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/api/openai"
)

// Checks for requests every upstream would refuse, or would take in a
// form the client did not mean: refused here, naming the member, rather
// than sent on to fail there in the other protocol's words.

// positiveBound refuses an output bound (max_tokens and its kin) below 1.
func positiveBound(param string, n *int64) error {
	if n != nil && *n < 1 {
		return badRequest(param, "%s: must be a positive integer (the most tokens the answer may have), got %d", param, *n)
	}
	return nil
}

// requiredCallID refuses a tool call or tool result without the id that
// pairs them: upstreams match results to calls by it, and one made up
// here would match nothing.
func requiredCallID(path, id, pairs string) error {
	if id == "" {
		return badRequest(path, "%s: required, a non-empty string: the id %s", path, pairs)
	}
	return nil
}

// requiredToolName refuses a function tool without a name (it would be
// offered to the model as "", or under a made-up name it could call).
func requiredToolName(path, name string) error {
	if name == "" {
		return badRequest(path, `%s: required, a non-empty string such as "get_weather"`, path)
	}
	return nil
}

// chatFunction checks a Chat Completions function tool: it needs its
// function object, with a name (an empty object reads as none). path is
// tools[i] or, for the legacy form, functions[i] (the function itself).
func chatFunction(t openai.Tool, path string, legacy bool) error {
	if legacy {
		return requiredToolName(path+".name", t.Function.Name)
	}
	f := t.Function
	if f.Name == "" && f.Description == "" && len(f.Parameters) == 0 && f.Strict == nil {
		return badRequest(path+".function", `%s.function: required for a tool of type "function": an object with a non-empty name (and the function's description and parameters)`, path)
	}
	return requiredToolName(path+".function.name", f.Name)
}

// chatToolPath is the path of defs[i] in a Chat Completions request whose
// definitions are its tools followed by its legacy functions.
func chatToolPath(in *openai.ChatRequest, i int) (path string, legacy bool) {
	if i < len(in.Tools) {
		return "tools[" + strconv.Itoa(i) + "]", false
	}
	return "functions[" + strconv.Itoa(i-len(in.Tools)) + "]", true
}

// anthropicImageTypes are the image media types Anthropic takes.
var anthropicImageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// imageMediaType is a data URL's media type as Anthropic names it:
// lower case, without parameters.
func imageMediaType(mt string) string {
	mt, _, _ = strings.Cut(mt, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}
