package dialect

import (
	"fmt"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// Gemini is the Gemini API's generateContent: an upstream protocol only
// (no client speaks it to tollgate), reached through the translators of
// the client protocols. Its errors are Google's status objects; usage
// is usageMetadata; a stream is server-sent events, each a whole answer
// holding the parts generated since the last.
var Gemini = &Dialect{
	Name:            "gemini",
	RequestIDHeader: "X-Goog-Request-Id",
	Error:           googleError,
	Usage: func(u *meter.Usage, body []byte) {
		if v := gjson.GetBytes(body, "usageMetadata"); v.IsObject() {
			gemini.SetUsage(u, v.Raw)
		}
	},
	Generated: []string{"candidates.0.content.parts.0.text"},
	ReadTokenCount: func(body []byte) (int, bool) {
		n := gjson.GetBytes(body, "totalTokens")
		return int(n.Int()), n.Type == gjson.Number && n.Int() >= 0
	},
}

// googleStatus names Google's canonical status of each kind.
var googleStatus = [...]string{
	InvalidRequest: "INVALID_ARGUMENT", Authentication: "UNAUTHENTICATED", Permission: "PERMISSION_DENIED",
	NotFound: "NOT_FOUND", MethodNotAllowed: "INVALID_ARGUMENT", TooLarge: "INVALID_ARGUMENT", Upstream: "UNAVAILABLE",
	Timeout: "DEADLINE_EXCEEDED", NotImplemented: "UNIMPLEMENTED", Internal: "INTERNAL", Unavailable: "UNAVAILABLE",
	RateLimit: "RESOURCE_EXHAUSTED", Budget: "RESOURCE_EXHAUSTED",
}

// googleCodes are the HTTP codes Google's envelope carries per kind.
var googleCodes = [...]int{
	InvalidRequest: http.StatusBadRequest, Authentication: http.StatusUnauthorized, Permission: http.StatusForbidden,
	NotFound: http.StatusNotFound, MethodNotAllowed: http.StatusMethodNotAllowed, TooLarge: http.StatusRequestEntityTooLarge,
	Upstream: http.StatusBadGateway, Timeout: http.StatusGatewayTimeout, NotImplemented: http.StatusNotImplemented,
	Internal: http.StatusInternalServerError, Unavailable: http.StatusServiceUnavailable, RateLimit: http.StatusTooManyRequests,
	Budget: http.StatusTooManyRequests,
}

// googleError renders Google's error envelope.
func googleError(e Error) []byte {
	b := fmt.Appendf(nil, `{"error":{"code":%d,"message":`, googleCodes[e.Kind])
	b = jsonx.AppendQuote(b, e.Message)
	b = append(b, `,"status":`...)
	b = jsonx.AppendQuote(b, googleStatus[e.Kind])
	return append(b, "}}"...)
}
