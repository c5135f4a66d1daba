// Package anthropic holds wire types of the Anthropic Messages API.
// Reference: https://docs.anthropic.com/en/api/messages
package anthropic

import "github.com/tollgate/tollgate/internal/jsonx"

// Error types of the Messages API (https://docs.anthropic.com/en/api/errors).
const (
	ErrInvalidRequest  = "invalid_request_error" // 400, and other 4xx
	ErrAuthentication  = "authentication_error"  // 401
	ErrBilling         = "billing_error"         // 402
	ErrPermission      = "permission_error"      // 403
	ErrNotFound        = "not_found_error"       // 404
	ErrRequestTooLarge = "request_too_large"     // 413
	ErrRateLimit       = "rate_limit_error"      // 429
	ErrAPI             = "api_error"             // 500
	ErrTimeout         = "timeout_error"         // 504
	ErrOverloaded      = "overloaded_error"      // 529
)

// ErrorEnvelope is the body of every Messages API error, and the data of an
// "error" stream event.
type ErrorEnvelope struct {
	Type      string      `json:"type"` // always "error"
	Error     ErrorDetail `json:"error"`
	RequestID string      `json:"request_id,omitempty"`
}

// ErrorDetail is the inner error object.
type ErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// MarshalError encodes an error envelope.
func MarshalError(typ, message, requestID string) []byte {
	b, _ := jsonx.Marshal(ErrorEnvelope{Type: "error", Error: ErrorDetail{Type: typ, Message: message}, RequestID: requestID})
	return b
}

// StatusForErrorType is the HTTP status Anthropic uses for an error type; it
// lets a stream's first-event error become an ordinary HTTP error.
func StatusForErrorType(typ string) int {
	switch typ {
	case ErrInvalidRequest:
		return 400
	case ErrAuthentication:
		return 401
	case ErrBilling:
		return 402
	case ErrPermission:
		return 403
	case ErrNotFound:
		return 404
	case ErrRequestTooLarge:
		return 413
	case ErrRateLimit:
		return 429
	case ErrTimeout:
		return 504
	case ErrOverloaded:
		return 529
	default:
		return 500
	}
}

// SyntheticSignaturePrefix marks thinking signatures made by tollgate for
// reasoning that came from another protocol's upstream. Anthropic would
// reject them, so blocks carrying one are never sent to an Anthropic
// upstream.
const SyntheticSignaturePrefix = "tollgate.v1."

// IsSyntheticSignature reports whether sig is a tollgate-made signature.
func IsSyntheticSignature(sig string) bool {
	return len(sig) >= len(SyntheticSignaturePrefix) && sig[:len(SyntheticSignaturePrefix)] == SyntheticSignaturePrefix
}
