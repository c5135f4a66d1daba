package gateway

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// forwardedHeaders are the client headers every upstream gets. Everything
// else, the client's own key first of all, stays at the gateway (the
// provider adds its credential), but for the headers of the client's
// dialect that reach an upstream of the same dialect (ForwardHeaders).
var forwardedHeaders = []string{"User-Agent", "Accept"}

func upstreamHeader(r *http.Request, dialectHeaders []string) http.Header {
	h := make(http.Header, len(forwardedHeaders)+len(dialectHeaders)+3)
	for _, names := range [2][]string{forwardedHeaders, dialectHeaders} {
		for _, k := range names {
			if v := r.Header[k]; len(v) > 0 {
				h[k] = v
			}
		}
	}
	return h
}

// filterBetas keeps, in the beta header of an upstream request (named
// by the dialect: anthropic-beta), only the betas the target's allowlists
// accept, so that a key cannot turn on any beta with the operator's
// account. It reports what it dropped in the answer's
// tollgate-dropped-betas header.
func filterBetas(h http.Header, name string, allow []func(string) bool, answer http.Header) {
	if len(allow) == 0 || name == "" || h[name] == nil {
		return
	}
	kept, dropped := config.FilterBetas(h[name], allow...)
	if kept == nil {
		delete(h, name)
	} else {
		h[name] = kept
	}
	if len(dropped) > 0 {
		answer.Set("Tollgate-Dropped-Betas", strings.Join(dropped, ","))
	}
}

// relayedResponseHeaders are the upstream response headers a client gets:
// what describes the answer (its type and encoding), the upstream's
// request id, and what tells a client when to retry. Anything else (the
// provider's organization or project ids, CORS grants, cookies, its
// connection's headers) stays at the gateway. Rate-limit headers are
// relayed only when the gateway's own limits do not apply.
var relayedResponseHeaders = map[string]bool{
	"Content-Type": true, "Content-Encoding": true, "Cache-Control": true, "X-Accel-Buffering": true,
	"Request-Id": true, "X-Request-Id": true,
	"Retry-After": true, "Retry-After-Ms": true, "X-Should-Retry": true,
	"Openai-Processing-Ms": true, "Openai-Version": true,
	"Tollgate-Token-Count": true, // the built-in echo provider's estimate
}

// copyResponseHeader relays the allowed upstream response headers to the
// client. With ownLimits the upstream's rate-limit headers are dropped:
// the client is limited by the gateway, whose headers are already set.
func copyResponseHeader(dst, src http.Header, ownLimits bool) {
	for k, v := range src {
		if relayedResponseHeaders[k] || !ownLimits && dialect.IsRateLimitHeader(k) {
			dst[k] = v
		}
	}
}

// answerHeaders adds, to an answer that came from an upstream, which
// target answered (tollgate-target: provider/model) and how long the
// gateway took before sending it the request, other attempts' upstream
// waits excluded (tollgate-overhead-ms). Either can be turned off.
func (g *Gateway) answerHeaders(h http.Header, x *exchange) {
	if x.target == nil {
		return
	}
	if g.targetHeader {
		h["Tollgate-Target"] = x.target.NameHeader
	}
	if g.overheadHeader && !x.sendStart.IsZero() {
		d := max(x.sendStart.Sub(x.start)-x.earlierWaits, 0)
		h["Tollgate-Overhead-Ms"] = []string{strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64)}
	}
}
