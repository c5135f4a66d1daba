package translate

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/openai"
)

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

// UpstreamError is an upstream answer that cannot be translated into a
// valid response (HTTP 502 to the client). Err is the cause, if any.
type UpstreamError struct {
	Message string
	Err     error
}

func (e *UpstreamError) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *UpstreamError) Unwrap() error { return e.Err }

// pathAt is the JSON path of element i of member name of the value at
// path ("" for the body): messages[2], messages[2].content[0]. Paths are
// made for every element a request has, so this is fmt.Sprintf without
// its cost.
func pathAt(path, name string, i int) string {
	var buf [64]byte
	b := buf[:0]
	if path != "" {
		b = append(b, path...)
		b = append(b, '.')
	}
	b = append(b, name...)
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(i), 10)
	return string(append(b, ']'))
}
