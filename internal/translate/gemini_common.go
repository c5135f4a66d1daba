package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// Shared by the Gemini pairs: thought signatures in their clients'
// carriers, tool names, finish reasons, errors.

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

// GeminiErrorToAnthropic translates a Gemini error answer ({"error":
// {"code", "message", "status"}}, sometimes in a list) into the Anthropic
// envelope; status 0 is a stream's error event. noRetry is set for the
// errors no retry can fix.
func GeminiErrorToAnthropic(status int, body []byte) (int, []byte, bool) {
	e := gjson.GetBytes(body, "error")
	if !e.Exists() {
		e = gjson.GetBytes(body, "0.error")
	}
	msg := e.Get("message").String()
	if msg == "" {
		msg = strings.TrimSpace(string(body))
		if msg == "" {
			msg = "the upstream answered status " + strconv.Itoa(status)
		}
	}
	k, ok := googleErrorTypes[e.Get("status").String()]
	if !ok {
		code := status
		if code == 0 {
			code = int(e.Get("code").Int())
		}
		k.status, k.typ = anthropicStatusType(code)
	}
	if status != 0 && k.status < 500 && status >= 500 {
		k.status = status // a 5xx answer stays one, whatever its body says
	}
	noRetry := k.status >= 400 && k.status < 500 && k.status != 429
	return k.status, anthropic.MarshalError(k.typ, msg, ""), noRetry
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
