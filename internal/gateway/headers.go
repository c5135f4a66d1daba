package gateway

import (
	"net/http"
	"strconv"
)

// forwardedHeaders are the client headers the pass-through lane sends
// upstream. Everything else — the client's own key first of all — stays at
// the gateway; the provider adds its credential.
var forwardedHeaders = map[bool][]string{
	true:  {"Anthropic-Version", "Anthropic-Beta", "User-Agent", "Accept"}, // Anthropic upstreams
	false: {"User-Agent", "Accept"},                                        // OpenAI-compatible upstreams
}

func upstreamHeader(r *http.Request, anthropicUpstream bool) http.Header {
	names := forwardedHeaders[anthropicUpstream]
	h := make(http.Header, len(names)+3)
	for _, k := range names {
		if v := r.Header[k]; len(v) > 0 {
			h[k] = v
		}
	}
	return h
}

// droppedResponseHeaders are upstream response headers not relayed: hop-by-
// hop headers (RFC 9110 §7.6.1), and headers about the upstream's own
// connection or site rather than the API answer.
var droppedResponseHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Length": true, // set by the relay when the body is relayed unchanged
	"Date":           true, // the gateway's own server sets it
	"Set-Cookie":     true, "Alt-Svc": true,
}

// copyResponseHeader relays upstream response headers (request-id,
// retry-after, rate-limit headers, provider extras) to the client. With
// ownLimits the upstream's rate-limit headers are dropped: the client is
// limited by the gateway, whose headers are already set.
func copyResponseHeader(dst, src http.Header, ownLimits bool) {
	for k, v := range src {
		if !droppedResponseHeaders[k] && !(ownLimits && isRateLimitHeader(k)) {
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
