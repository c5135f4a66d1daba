// Package openai holds wire types of the OpenAI Chat Completions API.
// Reference: https://platform.openai.com/docs/api-reference/chat
package openai

import "github.com/tollgate/tollgate/internal/jsonx"

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
