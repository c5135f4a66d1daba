package dialect

import "time"

// Kind classifies an error the gateway answers itself; each dialect
// renders it in its own envelope.
type Kind uint8

const (
	InvalidRequest   Kind = iota // 400
	Authentication               // 401
	Permission                   // 403
	NotFound                     // 404
	MethodNotAllowed             // 405
	TooLarge                     // 413
	Upstream                     // the upstream failed or could not be reached: 502
	Timeout                      // the upstream took too long: 504
	NotImplemented               // a route or protocol pair tollgate cannot serve: 501
	Internal                     // 500
	Unavailable                  // tollgate itself cannot serve now: 503
	RateLimit                    // a limit refused the request: 429
	Budget                       // a budget cannot cover the request: 429
)

// kindNames are the kinds' names in ledger records and logs.
var kindNames = [...]string{
	InvalidRequest: "invalid_request_error", Authentication: "authentication_error", Permission: "permission_error",
	NotFound: "not_found_error", MethodNotAllowed: "invalid_request_error", TooLarge: "request_too_large",
	Upstream: "api_error", Timeout: "timeout_error", NotImplemented: "invalid_request_error", Internal: "api_error",
	Unavailable: "api_error", RateLimit: "rate_limit_error", Budget: "rate_limit_error",
}

// String is the kind's name in ledger records (error_type) and logs.
func (k Kind) String() string { return kindNames[k] }

// Error is what an error envelope says.
type Error struct {
	Kind      Kind
	Message   string
	Param     string // the request member at fault, if any
	Code      string // a machine-readable code, if any; else the kind's
	RequestID string
	// RetryAfter is when the client may try again; 0 when unknown.
	RetryAfter time.Duration
}
