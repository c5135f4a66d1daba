package gateway

import (
	"net/http"
	"strconv"

	"github.com/tollgate/tollgate/internal/api"
	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
)

// kind classifies a gateway error; the renderer turns it into each
// dialect's error type.
type kind uint8

const (
	kindInvalidRequest kind = iota
	kindAuthentication
	kindPermission
	kindNotFound
	kindMethodNotAllowed
	kindTooLarge
	kindUpstream       // the upstream failed or could not be reached: 502
	kindTimeout        // the upstream took too long: 504
	kindNotImplemented // a route tollgate cannot serve yet: 501
	kindInternal
	kindUnavailable // tollgate itself cannot serve now (its key database is down): 503
	kindRateLimit   // a limit of the key or model refused the request: 429
	kindBudget      // a budget cannot cover the request: 429
)

// errorTypes maps a kind to (Anthropic type, OpenAI type, OpenAI code).
var errorTypes = [...]struct{ anthropic, openai, code string }{
	kindInvalidRequest:   {anthropic.ErrInvalidRequest, openai.ErrInvalidRequest, ""},
	kindAuthentication:   {anthropic.ErrAuthentication, openai.ErrInvalidRequest, "invalid_api_key"},
	kindPermission:       {anthropic.ErrPermission, openai.ErrPermission, ""},
	kindNotFound:         {anthropic.ErrNotFound, openai.ErrInvalidRequest, "not_found"},
	kindMethodNotAllowed: {anthropic.ErrInvalidRequest, openai.ErrInvalidRequest, "method_not_allowed"},
	kindTooLarge:         {anthropic.ErrRequestTooLarge, openai.ErrInvalidRequest, "request_too_large"},
	kindUpstream:         {anthropic.ErrAPI, openai.ErrServer, "upstream_error"},
	kindTimeout:          {anthropic.ErrTimeout, openai.ErrServer, "timeout"},
	kindNotImplemented:   {anthropic.ErrInvalidRequest, openai.ErrInvalidRequest, "not_implemented"},
	kindInternal:         {anthropic.ErrAPI, openai.ErrServer, ""},
	kindUnavailable:      {anthropic.ErrAPI, openai.ErrUnavailable, "service_unavailable"},
	kindRateLimit:        {anthropic.ErrRateLimit, openai.ErrRateLimit, "rate_limit_exceeded"},
	kindBudget:           {anthropic.ErrRateLimit, openai.ErrInsufficientQuota, "insufficient_quota"},
}

// Error is an error the gateway answers itself. Message is what the client
// sees; Err is the cause, for the log only (it may hold internals).
type Error struct {
	Status  int
	Kind    kind
	Message string
	Param   string      // the request field at fault, if any (OpenAI "param")
	Code    string      // overrides the kind's OpenAI "code"
	Header  http.Header // extra response headers (Allow, Retry-After, …)
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func newError(status int, k kind, msg string) *Error {
	return &Error{Status: status, Kind: k, Message: msg}
}

// writeError renders e in the envelope of the client's dialect. It sets
// request-id (Anthropic) or x-request-id (OpenAI) to tollgate's id, since
// no upstream answered.
func writeError(w http.ResponseWriter, d api.Dialect, requestID string, e *Error) {
	h := w.Header()
	for k, v := range e.Header {
		h[k] = v
	}
	t := errorTypes[e.Kind]
	var body []byte
	if d == api.Anthropic {
		h.Set("Request-Id", requestID)
		body = anthropic.MarshalError(t.anthropic, e.Message, requestID)
	} else {
		h.Set("X-Request-Id", requestID)
		code := e.Code
		if code == "" {
			code = t.code
		}
		body = openai.MarshalError(t.openai, e.Message, e.Param, code)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	w.Write(body)
}
