package translate

import (
	"regexp"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
)

// AnthropicErrorToOpenAI maps an Anthropic upstream error (status and body)
// to the status and body an OpenAI client gets (TRANSLATION.md §4.2).
// Upstream credential and billing failures become 502: the client's own
// key was fine. noRetry means the answer should carry x-should-retry: false.
func AnthropicErrorToOpenAI(status int, body []byte) (int, []byte, bool) {
	typ := gjson.GetBytes(body, "error.type").String()
	msg := errorMessage(body, "error.message")
	if status == 0 { // an error event inside a stream carries no status
		status = anthropic.StatusForErrorType(typ)
	}
	out, otype, code, noRetry := status, openai.ErrServer, "", false
	switch {
	case status == 401 || typ == anthropic.ErrAuthentication:
		out, code, noRetry = 502, "upstream_auth_failed", true
		msg = "upstream rejected the gateway's credential: " + msg
	case status == 402 || typ == anthropic.ErrBilling:
		out, code, noRetry = 502, "upstream_billing", true
		msg = "upstream billing error: " + msg
	case status == 403:
		otype = openai.ErrPermission
	case status == 404:
		otype = openai.ErrInvalidRequest
		if strings.Contains(msg, "model") {
			code = "model_not_found"
		}
	case status == 413:
		otype, code = openai.ErrInvalidRequest, "request_too_large"
	case status == 429:
		otype, code = openai.ErrRateLimit, "rate_limit_exceeded"
	case status == 529 || typ == anthropic.ErrOverloaded:
		out, otype, code = 503, openai.ErrUnavailable, "server_is_overloaded"
	case status == 504 || typ == anthropic.ErrTimeout:
		out, code = 504, "timeout"
	case status >= 500:
	case status >= 400:
		otype = openai.ErrInvalidRequest
		if strings.HasPrefix(msg, "prompt is too long") {
			code = "context_length_exceeded"
		}
	}
	return out, openai.MarshalError(otype, msg, "", code), noRetry
}

// OpenAIErrorToAnthropic maps an OpenAI-compatible upstream error to the
// status and body an Anthropic client gets (TRANSLATION.md §4.3). A zero
// status (an error chunk inside a stream) is inferred from the body.
func OpenAIErrorToAnthropic(status int, body []byte) (int, []byte) {
	e := gjson.GetBytes(body, "error")
	otype, code := e.Get("type").String(), e.Get("code").String()
	msg := errorMessage(body, "error.message")
	if status == 0 {
		status = openai.StatusForError(otype, code)
	}
	out, atype := status, anthropic.ErrAPI
	switch {
	case status == 401 || status == 402 || code == "insufficient_quota":
		out, atype = 502, anthropic.ErrAPI
		msg = "upstream rejected the gateway's credential or account: " + msg
	case status == 403:
		atype = anthropic.ErrPermission
	case status == 404:
		atype = anthropic.ErrNotFound
	case status == 409:
		atype = "conflict_error"
	case status == 413:
		atype = anthropic.ErrRequestTooLarge
	case status == 429:
		atype = anthropic.ErrRateLimit
	case status == 503:
		out, atype = 529, anthropic.ErrOverloaded
	case status == 504:
		atype = anthropic.ErrTimeout
	case status >= 500:
	case status >= 400:
		out, atype = 400, anthropic.ErrInvalidRequest
		if code == "context_length_exceeded" {
			msg = promptTooLong(msg)
		}
	}
	return out, anthropic.MarshalError(atype, msg, "")
}

var contextLengthRE = regexp.MustCompile(`maximum context length is (\d+) tokens.*?(\d+) tokens`)

// promptTooLong rewords a context overflow the way Anthropic does, which
// agent clients key context compaction on.
func promptTooLong(msg string) string {
	if m := contextLengthRE.FindStringSubmatch(msg); m != nil {
		return "prompt is too long: " + m[2] + " tokens > " + m[1] + " maximum"
	}
	return "prompt is too long: " + msg
}

// errorMessage reads the message at path, or the body's first 500 bytes
// when it is not JSON (an HTML page from a proxy).
func errorMessage(body []byte, path string) string {
	if m := gjson.GetBytes(body, path); m.Type == gjson.String {
		return m.String()
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 500 {
		s = s[:500]
	}
	if s == "" {
		s = "upstream error"
	}
	return s
}

// OpenAIErrorToOpenAI maps an error of an upstream with the OpenAI error
// envelope (a chat or a Responses upstream) to what a client of the other
// OpenAI protocol gets: the same envelope, so a well-formed error keeps
// its body and status; a body that is not one (a proxy's HTML page) is
// wrapped in it. Upstream credential and billing failures become 502, as
// for the other pairs. A zero status (an error chunk inside a stream) is
// inferred from the body.
func OpenAIErrorToOpenAI(status int, body []byte) (int, []byte, bool) {
	e := gjson.GetBytes(body, "error")
	otype, code := e.Get("type").String(), e.Get("code").String()
	if status == 0 {
		status = openai.StatusForError(otype, code)
	}
	msg := errorMessage(body, "error.message")
	switch {
	case status == 401 || status == 402 || code == "insufficient_quota":
		return 502, openai.MarshalError(openai.ErrServer, "upstream rejected the gateway's credential or account: "+msg, "", "upstream_auth_failed"), true
	case e.Get("message").Type == gjson.String:
		if status < 400 || status > 599 {
			status = 502
		}
		return status, body, false
	}
	if otype == "" {
		otype = openai.ErrServer
		if status >= 400 && status < 500 {
			otype = openai.ErrInvalidRequest
		}
	}
	return status, openai.MarshalError(otype, msg, e.Get("param").String(), code), false
}
