// Package openai holds wire types of the OpenAI Chat Completions API.
// Reference: https://platform.openai.com/docs/api-reference/chat
package openai

import (
	"strconv"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Error types used in OpenAI error bodies.
const (
	ErrInvalidRequest = "invalid_request_error"
	ErrAuthentication = "authentication_error"
	ErrPermission     = "permission_error"
	ErrRateLimit      = "rate_limit_error"
	// ErrInsufficientQuota is OpenAI's type (and code) for a spent quota.
	ErrInsufficientQuota = "insufficient_quota"
	ErrServer            = "server_error"
	ErrUnavailable       = "service_unavailable_error"
)

// ErrorEnvelope is the body of every Chat Completions error, and the data of
// an error chunk in a stream.
type ErrorEnvelope struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inner error object. Param and Code are null when empty.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// MarshalError encodes an error envelope.
func MarshalError(typ, message, param, code string) []byte {
	d := ErrorDetail{Message: message, Type: typ}
	if param != "" {
		d.Param = &param
	}
	if code != "" {
		d.Code = &code
	}
	b, _ := jsonx.Marshal(ErrorEnvelope{Error: d})
	return b
}

// StatusForError is the HTTP status of an OpenAI error object that
// arrived without one (an error chunk in a stream), from its type and
// code. Compatible servers (vLLM, SGLang) put the status itself in code.
func StatusForError(typ, code string) int {
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
		return n
	}
	switch {
	case typ == ErrRateLimit || code == "rate_limit_exceeded":
		return 429
	case typ == ErrUnavailable || code == "server_is_overloaded":
		return 503
	case typ == ErrInvalidRequest:
		return 400
	case typ == ErrAuthentication:
		return 401
	case typ == ErrPermission:
		return 403
	case typ == ErrInsufficientQuota || code == ErrInsufficientQuota:
		return 429
	}
	return 500
}
