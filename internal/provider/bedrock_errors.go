package provider

import (
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/dialect"
)

// Bedrock answers errors in its own shape: the error's name in the
// X-Amzn-ErrorType header (or "__type"), {"message": …} in the body, and
// statuses of its own. They reach the gateway as Anthropic errors: the
// envelope the dialect's clients and the translation lane read.

var bedrockErrors = map[string]anthropicError{
	"validationexception":                 {400, "invalid_request_error"},
	"accessdeniedexception":               {403, "permission_error"},
	"resourcenotfoundexception":           {404, "not_found_error"},
	"throttlingexception":                 {429, "rate_limit_error"},
	"servicequotaexceededexception":       {429, "rate_limit_error"},
	"modelnotreadyexception":              {529, "overloaded_error"},
	"serviceunavailableexception":         {529, "overloaded_error"},
	"modeltimeoutexception":               {504, "timeout_error"},
	"internalserverexception":             {500, "api_error"},
	"modelerrorexception":                 {500, "api_error"},
	"modelstreamerrorexception":           {500, "api_error"},
	"unrecognizedclientexception":         {401, "authentication_error"},
	"invalidsignatureexception":           {401, "authentication_error"},
	"incompletesignatureexception":        {401, "authentication_error"},
	"missingauthenticationtokenexception": {401, "authentication_error"},
	"expiredtokenexception":               {401, "authentication_error"},
	"invalidclienttokenid":                {401, "authentication_error"},
	"signaturedoesnotmatch":               {401, "authentication_error"},
}

// bedrockError classifies an error name ("ThrottlingException", or
// "ThrottlingException:http://…" as the header has it); an unknown name
// keeps the answer's status.
func bedrockError(name string, status int) anthropicError {
	name, _, _ = strings.Cut(name, ":")
	if i := strings.LastIndexByte(name, '#'); i >= 0 { // "com.amazon…#ValidationException"
		name = name[i+1:]
	}
	if k, ok := bedrockErrors[strings.ToLower(name)]; ok {
		return k
	}
	switch {
	case status == http.StatusTooManyRequests:
		return anthropicError{429, "rate_limit_error"}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return anthropicError{status, "authentication_error"}
	case status >= 400 && status < 500:
		return anthropicError{status, "invalid_request_error"}
	}
	return anthropicError{http.StatusInternalServerError, "api_error"}
}

// maxErrorBody bounds what is read of an error answer.
const maxErrorBody = 64 << 10

// bedrockResponse makes Bedrock's answer the Anthropic dialect's: errors
// in its envelope, a stream as server-sent events; a whole answer is
// Anthropic's JSON already, and a token count is renamed.
func bedrockResponse(resp *http.Response, r *Request) *http.Response {
	if resp.StatusCode >= 300 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		name := resp.Header.Get("X-Amzn-Errortype")
		if name == "" {
			name = gjson.GetBytes(raw, "__type").Str
		}
		message := gjson.GetBytes(raw, "message").Str
		if message == "" {
			message = gjson.GetBytes(raw, "Message").Str
		}
		k := bedrockError(name, resp.StatusCode)
		return replaceBody(resp, k.status, "application/json", anthropicErrorBody(k, message))
	}
	switch {
	case r.Op == dialect.CountTokens:
		raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		n := gjson.GetBytes(raw, "inputTokens")
		if err != nil || n.Type != gjson.Number {
			return replaceBody(resp, http.StatusBadGateway, "application/json",
				anthropicErrorBody(anthropicError{http.StatusBadGateway, "api_error"}, "Bedrock answered the token count without inputTokens"))
		}
		return replaceBody(resp, resp.StatusCode, "application/json", []byte(`{"input_tokens":`+n.Raw+`}`))
	case strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.amazon.eventstream"):
		resp.Header.Set("Content-Type", "text/event-stream")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Body = newEventStreamSSE(resp.Body, r)
	}
	return resp
}
