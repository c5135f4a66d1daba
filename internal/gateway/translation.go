package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/api"
	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/tokens"
	"github.com/tollgate/tollgate/internal/translate"
)

// maxUpstreamBody bounds a non-streaming upstream answer the translation
// lane reads whole.
const maxUpstreamBody = 32 << 20

// translated serves a request whose target speaks the other protocol: the
// body is decoded, translated, sent, and the answer translated back.
func (g *Gateway) translated(w http.ResponseWriter, r *http.Request, x *exchange, m *route.Model, t route.Target, body []byte, s scanned, ep provider.Endpoint) error {
	x.provider, x.upstreamModel, x.prices = t.Provider.Name(), t.Model, t.Prices
	x.lane = "translated"
	// The upstream's id belongs to the other protocol (it goes in
	// tollgate-upstream-request-id); the client's own header gets ours.
	if x.dialect == api.Anthropic {
		w.Header()["Request-Id"] = []string{x.id}
	} else {
		w.Header()["X-Request-Id"] = []string{x.id}
	}
	if ep == provider.CountTokens {
		return g.countTokensEstimate(w, r, x, body)
	}
	req := &provider.Request{Model: t.Model, Stream: s.stream}
	var plan *translate.Plan
	var upstream any
	var err error
	if x.dialect == api.Anthropic {
		var in anthropic.MessagesRequest
		if err := jsonx.Unmarshal(body, &in); err != nil {
			return decodeError(err)
		}
		upstream, plan, err = translate.MessagesToChat(&in, t.Model, m.Caps, m.Policy, g.signer)
		req.Endpoint, req.Dialect = provider.ChatCompletions, api.OpenAI
	} else {
		var in openai.ChatRequest
		if err := jsonx.Unmarshal(body, &in); err != nil {
			return decodeError(err)
		}
		upstream, plan, err = translate.ChatToMessages(&in, t.Model, m.Caps, m.Policy, g.signer)
		req.Endpoint, req.Dialect = provider.Messages, api.Anthropic
	}
	if err != nil {
		var re *translate.RequestError
		if errors.As(err, &re) {
			return &Error{Status: http.StatusBadRequest, Kind: kindInvalidRequest, Param: re.Param, Message: re.Message}
		}
		return err
	}
	plan.InputEstimate = estimateTokens(body)
	b, err := jsonx.Marshal(upstream)
	if err != nil {
		return &Error{Status: http.StatusInternalServerError, Kind: kindInternal, Message: "internal error preparing the upstream request", Err: err}
	}
	req.Body = provider.Body{b}
	req.Header = upstreamHeader(r, req.Dialect == api.Anthropic && x.dialect == api.Anthropic)
	if d := plan.Dropped(); len(d) > 0 {
		w.Header().Set("Tollgate-Dropped-Params", strings.Join(d, ","))
	}
	if a := plan.Adjusted(); len(a) > 0 {
		w.Header().Set("Tollgate-Adjusted-Params", strings.Join(a, ","))
	}

	resp, done, err := g.send(r, x, t.Provider, req)
	if err != nil {
		return retryableSend(x, err)
	}
	defer done()
	keepUpstreamIDs(w.Header(), resp.Header)

	switch {
	case retryableStatus(resp.StatusCode):
		return bufferFailure(resp, true)
	case credentialRefused(resp.StatusCode):
		return upstreamCredentialError(x, resp)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return g.translatedError(w, x, resp)
	case isEventStream(resp.Header):
		resp.Header = http.Header{"Content-Type": {"text/event-stream"}}
		if x.dialect == api.Anthropic {
			return g.relayStream(w, r, x, resp, &pingingTap{translatingTap{s: translate.NewChatToMessagesStream(plan)}})
		}
		return g.relayStream(w, r, x, resp, &translatingTap{s: translate.NewMessagesToChatStream(plan, clock.Now().Unix())})
	default:
		return g.translatedBody(w, x, resp, plan)
	}
}

func decodeError(err error) error {
	return &Error{Status: http.StatusBadRequest, Kind: kindInvalidRequest, Message: "invalid request body: " + err.Error()}
}

// keepUpstreamIDs exposes the upstream's request id under tollgate's name;
// its own headers belong to the other protocol and are not relayed.
func keepUpstreamIDs(dst, src http.Header) {
	if id := src.Get("Request-Id"); id != "" {
		dst.Set("Tollgate-Upstream-Request-Id", id)
	} else if id := src.Get("X-Request-Id"); id != "" {
		dst.Set("Tollgate-Upstream-Request-Id", id)
	}
	for _, k := range []string{"Retry-After", "Retry-After-Ms"} {
		if v := src.Get(k); v != "" {
			dst.Set(k, v)
		}
	}
}

// translatedError maps an upstream error into the client's envelope and
// status (TRANSLATION.md §4.2, §4.3).
func (g *Gateway) translatedError(w http.ResponseWriter, x *exchange, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var status int
	var out []byte
	if x.dialect == api.OpenAI {
		var noRetry bool
		status, out, noRetry = translate.AnthropicErrorToOpenAI(resp.StatusCode, body)
		if noRetry {
			w.Header().Set("X-Should-Retry", "false")
		}
	} else {
		status, out = translate.OpenAIErrorToAnthropic(resp.StatusCode, body)
		if status == http.StatusBadGateway {
			w.Header().Set("X-Should-Retry", "false")
		}
	}
	x.err = fmt.Errorf("upstream status %d", resp.StatusCode)
	return g.writeBody(w, x, status, out)
}

// translatedBody translates a whole (non-stream) answer.
func (g *Gateway) translatedBody(w http.ResponseWriter, x *exchange, resp *http.Response, plan *translate.Plan) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody))
	if err != nil {
		// Nothing was sent yet: another target may answer.
		return &failure{err: g.upstreamFailureAfterStatus(x, err)}
	}
	var out any
	var stream []byte // the answer as a stream, when the client asked for one
	if x.dialect == api.Anthropic {
		var c openai.Completion
		if err := jsonx.Unmarshal(body, &c); err != nil {
			return badUpstream(x, "upstream answer is not a valid chat completion", err)
		}
		msg, u, terr := translate.ChatResponseToMessages(&c, plan)
		x.usage = u
		if terr != nil {
			return badUpstream(x, terr.Error(), terr)
		}
		out = msg
		if plan.Stream {
			stream = translate.MessagesStream(msg)
		}
	} else {
		var m anthropic.Response
		if err := jsonx.Unmarshal(body, &m); err != nil {
			return badUpstream(x, "upstream answer is not a valid message", err)
		}
		c, u := translate.MessagesResponseToChat(&m, plan, clock.Now().Unix())
		x.usage, out = u, c
		if plan.Stream {
			stream = translate.ChatStream(c, plan)
		}
	}
	if plan.Stream {
		// The upstream answered a stream request with one object: the
		// client still gets the stream it asked for.
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		x.status, x.firstByte = http.StatusOK, time.Since(x.start)
		g.answerHeaders(h, x)
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(stream); err != nil {
			x.clientGone = true
		}
		return nil
	}
	b, err := jsonx.Marshal(out)
	if err != nil {
		return err
	}
	return g.writeBody(w, x, http.StatusOK, b)
}

func (g *Gateway) upstreamFailureAfterStatus(x *exchange, err error) error {
	if provider.IsTimeout(err) {
		return &Error{Status: http.StatusGatewayTimeout, Kind: kindTimeout, Err: err,
			Message: fmt.Sprintf("upstream provider %q did not finish its answer in time", x.provider)}
	}
	return &Error{Status: http.StatusBadGateway, Kind: kindUpstream, Err: err,
		Message: fmt.Sprintf("upstream provider %q failed while answering", x.provider)}
}

func badUpstream(x *exchange, msg string, err error) error {
	return &Error{Status: http.StatusBadGateway, Kind: kindUpstream, Err: err,
		Message: fmt.Sprintf("%s (provider %q)", msg, x.provider)}
}

func (g *Gateway) writeBody(w http.ResponseWriter, x *exchange, status int, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	x.status, x.firstByte = status, time.Since(x.start)
	g.answerHeaders(h, x)
	w.WriteHeader(status)
	if _, err := w.Write(body); err != nil {
		x.clientGone = true
	}
	return nil
}

// translatedStream is a translate stream machine, either direction.
// (NewChatToMessagesStream and NewMessagesToChatStream both satisfy it.)
type translatedStream interface {
	Feed(ev []byte) []byte
	StartError(ev []byte) (int, []byte, bool)
	Close(eof bool, msg string) ([]byte, bool)
	Usage() meter.Usage
}

// translatingTap lets the relay drive a translator: each upstream event is
// replaced by what it translates to.
type translatingTap struct{ s translatedStream }

func (t *translatingTap) observe(ev []byte) []byte { return t.s.Feed(ev) }
func (t *translatingTap) startError(ev []byte) (int, []byte, bool) {
	return t.s.StartError(ev)
}
func (t *translatingTap) finish(eof bool, msg string) ([]byte, bool) { return t.s.Close(eof, msg) }
func (t *translatingTap) usage() meter.Usage                         { return t.s.Usage() }

// pingingTap is a translatingTap whose client gets keep-alive events while
// the upstream is silent (Anthropic clients; OpenAI upstreams send none).
type pingingTap struct{ translatingTap }

func (t *pingingTap) ping() []byte { return []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n") }

// countTokensEstimate answers count_tokens for models whose upstream has no
// such endpoint with a local count (an offline tokenizer), flagged as an
// estimate in a response header.
//
// Counting takes a core: bodies over maxCountBody are refused, at most one
// count per core runs at once (others wait their turn, or until their
// client leaves), and the tokenizer works in bounded pieces.
func (g *Gateway) countTokensEstimate(w http.ResponseWriter, r *http.Request, x *exchange, body []byte) error {
	if len(body) > maxCountBody {
		return newError(http.StatusRequestEntityTooLarge, kindTooLarge, fmt.Sprintf(
			"count_tokens: the request body is %d bytes; this model's tokens are counted by the gateway, for bodies of at most %d bytes", len(body), maxCountBody))
	}
	if err := counting.acquire(r.Context()); err != nil {
		x.clientGone = true
		return fmt.Errorf("client went away waiting to count: %w", err)
	}
	var c tokens.Counter
	tokens.AddMessagesRequest(&c, body)
	counting.release()
	w.Header().Set("Tollgate-Token-Count", "estimate")
	return g.writeBody(w, x, http.StatusOK, []byte(`{"input_tokens":`+strconv.Itoa(c.Tokens())+`}`))
}

// maxCountBody bounds the bodies counted locally: about two seconds of
// one core for the worst text, against 17 s for a 31 MB body.
const maxCountBody = 4 << 20

// estimateTokens is a rough prompt size: about four bytes a token for the
// text of a JSON body.
func estimateTokens(body []byte) int64 { return int64(len(body)+3) / 4 }
