package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"path"
	"strings"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// Shared by the Gemini pairs: thought signatures in their clients'
// carriers and call ids, tool names and tool config, data parts, finish
// reasons, errors.

// sealedGemini is what a client's carrier of a Gemini thought signature
// holds: the signature exactly as Gemini sent it.
type sealedGemini struct {
	Signature string `json:"gemini_thought_signature"`
}

// sealGemini seals a Gemini thought signature for a client to carry (an
// Anthropic thinking block's signature): only this gateway's key opens
// it, so a client cannot pass its own bytes off as Gemini's.
func (s *Signer) sealGemini(sig string) string {
	if s == nil {
		return ""
	}
	return s.seal(mustJSON(sealedGemini{Signature: sig}))
}

// unsealGemini returns the Gemini thought signature a carrier holds.
func (s *Signer) unsealGemini(v string) (string, bool) {
	if s == nil {
		return "", false
	}
	payload, ok := s.unseal(v)
	if !ok {
		return "", false
	}
	var g sealedGemini
	if jsonx.Unmarshal(payload, &g) != nil || g.Signature == "" {
		return "", false
	}
	return g.Signature, true
}

// maxGeminiStop is the most stop sequences Gemini takes.
const maxGeminiStop = 5

// validGeminiName reports whether Gemini takes a function name: a letter
// or underscore, then letters, digits, underscores, dots, colons or
// dashes, 64 at most.
func validGeminiName(s string) bool {
	if s == "" || len(s) > maxToolName || !(s[0] == '_' || 'a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !idChar(c) && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

// geminiToolName maps a client tool name to one Gemini takes, recording
// the mapping so answers carry the client's name (as upstreamToolName).
func (p *Plan) geminiToolName(name string) string {
	if validGeminiName(name) {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	short := sanitizeID(name)
	if len(short) > 54 {
		short = short[:54]
	}
	short = "_" + short + "_" + hex.EncodeToString(sum[:4])
	if p.toolNames == nil {
		p.toolNames = make(map[string]string)
	}
	p.toolNames[short] = name
	return short
}

// geminiStopReason is the Anthropic stop_reason of a Gemini finishReason.
// Safety and policy stops are refusals; a stop after function calls is
// tool_use (Gemini says STOP).
func geminiStopReason(finish string, toolsEmitted, blocked bool) string {
	if blocked {
		return anthropic.StopRefusal
	}
	switch finish {
	case gemini.FinishMaxTokens:
		return anthropic.StopMaxTokens
	case gemini.FinishSafety, gemini.FinishRecitation, gemini.FinishBlocklist, gemini.FinishProhibitedContent,
		gemini.FinishSPII, gemini.FinishImageSafety:
		return anthropic.StopRefusal
	}
	if toolsEmitted {
		return anthropic.StopToolUse
	}
	return anthropic.StopEndTurn
}

// googleErrorTypes are Google's error statuses as Anthropic error types
// and statuses.
var googleErrorTypes = map[string]struct {
	status int
	typ    string
}{
	"INVALID_ARGUMENT":    {400, anthropic.ErrInvalidRequest},
	"FAILED_PRECONDITION": {400, anthropic.ErrInvalidRequest},
	"OUT_OF_RANGE":        {400, anthropic.ErrInvalidRequest},
	"UNAUTHENTICATED":     {401, anthropic.ErrAuthentication},
	"PERMISSION_DENIED":   {403, anthropic.ErrPermission},
	"NOT_FOUND":           {404, anthropic.ErrNotFound},
	"RESOURCE_EXHAUSTED":  {429, anthropic.ErrRateLimit},
	"UNAVAILABLE":         {529, anthropic.ErrOverloaded},
	"DEADLINE_EXCEEDED":   {504, anthropic.ErrTimeout},
	"INTERNAL":            {500, anthropic.ErrAPI},
}

// anthropicStatusType is the Anthropic error of an HTTP status.
func anthropicStatusType(status int) (int, string) {
	switch {
	case status == 401:
		return 401, anthropic.ErrAuthentication
	case status == 403:
		return 403, anthropic.ErrPermission
	case status == 404:
		return 404, anthropic.ErrNotFound
	case status == 413:
		return 413, anthropic.ErrRequestTooLarge
	case status == 429:
		return 429, anthropic.ErrRateLimit
	case status == 503 || status == 529:
		return 529, anthropic.ErrOverloaded
	case status == 504:
		return 504, anthropic.ErrTimeout
	case status >= 400 && status < 500:
		return status, anthropic.ErrInvalidRequest
	}
	return 500, anthropic.ErrAPI
}

// A Chat Completions client keeps no reasoning between turns, but it
// always sends its tool calls back with their ids, and answers them by
// id. Gemini's thought signature therefore rides on the id of the call it
// came on: "<id>~<sealed signature>".
const callIDSignatureSep = "~"

// callIDWithSignature is the tool call id a Chat client gets for a Gemini
// function call carrying sig ("" when it carries none).
func (p *Plan) callIDWithSignature(id, sig string) string {
	if sig == "" {
		return id
	}
	return id + callIDSignatureSep + p.signer.sealGemini(sig)
}

// splitCallID undoes callIDWithSignature: the call's own id and the
// signature it carries ("" when none, or when the seal does not open).
func (p *Plan) splitCallID(id string) (string, string) {
	base, sealed, ok := strings.Cut(id, callIDSignatureSep+sealedPrefix)
	if !ok {
		return id, ""
	}
	sig, _ := p.signer.unsealGemini(sealedPrefix + sealed)
	return base, sig
}

// geminiDataPart is an image or file given as a data: URL (inline) or an
// http(s) URL (by reference).
func geminiDataPart(url, where string) (gemini.Part, error) {
	if strings.HasPrefix(url, "data:") {
		mt, data, ok := parseDataURL(url)
		if !ok {
			return gemini.Part{}, badRequest(where, "%s: a data: URL must be base64-encoded, as in data:image/png;base64,…", where)
		}
		return gemini.Part{InlineData: &gemini.Blob{MimeType: mt, Data: data}}, nil
	}
	if strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "gs://") {
		mt := mime.TypeByExtension(path.Ext(strings.SplitN(url, "?", 2)[0]))
		return gemini.Part{FileData: &gemini.FileData{MimeType: mt, FileURI: url}}, nil
	}
	return gemini.Part{}, badRequest(where, "%s: must be a data: URL or an http(s) URL", where)
}

// geminiToolConfig is the function calling config of a mode; name, when
// set, is the one function the model must call.
func (p *Plan) geminiToolConfig(mode, name string) *gemini.ToolConfig {
	fc := &gemini.FunctionCallingConfig{Mode: mode}
	if name != "" {
		fc.AllowedFunctionNames = []string{p.geminiToolName(name)}
	}
	return &gemini.ToolConfig{FunctionCallingConfig: fc}
}

// geminiErrorToOpenAI translates a Gemini error into the OpenAI envelope.
func geminiErrorToOpenAI(status int, body []byte) (int, []byte) {
	st, out, _ := GeminiErrorToOpenAI(status, body)
	return st, out
}

// geminiCallIDWith is geminiCallID with the prefix of a new id.
func geminiCallIDWith(id, prefix string) string {
	if id == "" {
		return prefix + randomHex(12)
	}
	return sanitizeID(id)
}
