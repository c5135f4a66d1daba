package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/embeddings"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/tokens"
)

// readEmbed checks an embeddings request (OpenAI's /v1/embeddings) beyond
// the scan: its inputs, format and dimensions, and that every target of
// its model can embed. Embeddings are never streamed.
func (g *Gateway) readEmbed(c *call) error {
	req, err := embeddings.Parse(c.body)
	if err != nil {
		var bad *embeddings.Error
		if errors.As(err, &bad) {
			return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: bad.Param, Message: bad.Message}
		}
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Message: "the request body is not a valid embeddings request", Err: err}
	}
	c.embed = req
	c.s.Stream, c.x.stream = false, false
	for i := range c.m.Targets {
		t := &c.m.Targets[i]
		if pass, wire := embedRoute(t); !pass && wire == nil {
			return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "model", Code: "model_not_embedding",
				Message: fmt.Sprintf("model %q cannot make embeddings: its target %q does not serve them", c.m.Name, t.Name)}
		}
	}
	return nil
}

// embedRoute says how target t serves embeddings: as the client sent
// them (pass, an OpenAI-compatible API), in the shape wire names, or not
// at all (neither).
func embedRoute(t *route.Target) (pass bool, wire *embeddings.Wire) {
	p := t.Provider
	if !provider.Serves(p, dialect.Embed) {
		return false, nil
	}
	if w := provider.EmbedWire(p, t.Model); w != nil {
		return false, w
	}
	return provider.Speaks(p, dialect.Chat), nil
}

// embedTranslated serves an embeddings request from target t, whose
// upstream takes them in wire's shape: the inputs are sent in batches of
// at most wire.MaxBatch (one after another; a wire of one input a request
// runs a few at once), and the vectors answered in OpenAI's shape, in the
// inputs' order. Every batch's request is made before any is sent, so a
// request the wire cannot take is refused before the upstream is asked. A
// batch's failure fails the attempt before anything reached the client,
// so another target may still be tried; the batches that succeeded were
// billed by the upstream, and are counted in the request's usage.
func (g *Gateway) embedTranslated(c *call, t *route.Target, wire *embeddings.Wire) error {
	x := c.x
	x.lane, x.upDialect = "translated", t.Provider.Dialect()
	c.w.Header()[x.dialect.RequestIDHeader] = []string{x.id}
	in := c.embed.Inputs
	batches := wire.Batches(in)
	bodies := make([][]byte, len(batches))
	for i, b := range batches {
		body, err := wire.Request(c.embed, t.Model, in[b[0]:b[1]])
		if err != nil {
			return embedRequestError(err)
		}
		bodies[i] = body
	}
	results := make([]embedResult, len(batches))
	ctx, cancel := context.WithCancel(c.r.Context())
	defer cancel()
	header := upstreamHeader(c.r, nil)
	began := time.Now()
	x.sendStart, x.earlierWaits = began, x.upstream
	var next, failed atomic.Int64
	failed.Store(-1) // the first batch that failed: the others may have failed for its cancel
	var wg sync.WaitGroup
	for range min(len(batches), embedParallel(wire)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(batches) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				b := batches[i]
				results[i] = embedBatch(ctx, c.embed, t, wire, header, bodies[i], b[1]-b[0], g.log, x.id)
				bodies[i] = nil
				if !results[i].ok() {
					failed.CompareAndSwap(-1, int64(i))
					cancel() // the other batches are of no use now
				}
			}
		}()
	}
	wg.Wait()
	x.upstream += time.Since(began)
	// What the upstream made, and billed, whether the attempt succeeds or not.
	var tokens int64
	var uncounted []embeddings.Input // inputs of batches that reported no tokens
	done := 0
	for i, r := range results {
		if r.vectors == nil {
			continue
		}
		done++
		tokens += int64(r.tokens)
		if r.tokens == 0 {
			uncounted = append(uncounted, in[batches[i][0]:batches[i][1]]...)
		}
	}
	if len(uncounted) > 0 {
		// The upstream reports no usage (Gemini; Cohere without Bedrock's
		// header): those inputs are counted here, and the answer says so.
		ectx, cancel := context.WithTimeout(context.WithoutCancel(x.ctx), estimateTime)
		tokens += embedTokens(ectx, &embeddings.Request{Inputs: uncounted})
		cancel()
		x.estimated = true
	}
	c.embedSpent += tokens
	x.usage.Input = c.embedSpent
	x.costed = false
	if f := failed.Load(); f >= 0 {
		return g.embedFailure(c, &results[f])
	}
	if err := c.r.Context().Err(); err != nil || done != len(batches) {
		if x.shuttingDown() {
			return shutdownError(context.Cause(x.ctx))
		}
		x.clientGone = true
		return fmt.Errorf("client went away during the embeddings batches: %w", err)
	}
	x.upstreamStatus = http.StatusOK
	vectors := make([]embeddings.Vector, 0, len(in))
	for i := range results {
		vectors = append(vectors, results[i].vectors...)
	}
	if x.estimated {
		c.w.Header().Set("Tollgate-Usage", "estimate")
	}
	// The client is told this attempt's tokens; the record has every
	// attempt's (an earlier target's batches were billed too).
	body := embeddings.EncodeVectors(nil, vectors, t.Model, c.embed.Format, int(tokens))
	return g.writeBody(c.w, x, http.StatusOK, body)
}

// embedRequestError is the client's answer for a request a wire cannot
// take (token arrays for a text-only API, dimensions it does not offer).
func embedRequestError(err error) error {
	var bad *embeddings.Error
	if errors.As(err, &bad) {
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: bad.Param, Message: bad.Message}
	}
	return &Error{Status: http.StatusInternalServerError, Kind: dialect.Internal, Message: "internal error preparing the upstream request", Err: err}
}

// embedResult is what one batch came to: its vectors and tokens (0: not
// reported), or the upstream's failure (err: no answer; resp: an answer
// that is not a success, its body read).
type embedResult struct {
	vectors []embeddings.Vector
	tokens  int
	err     error
	resp    *http.Response
}

func (r *embedResult) ok() bool { return r.err == nil && r.resp == nil }

// embedFailure is the attempt's error for a failed batch, as for any
// other request on the translation lane: a *failure another target may
// retry, a refused credential, or the upstream's error in the client's
// envelope.
func (g *Gateway) embedFailure(c *call, r *embedResult) error {
	x := c.x
	if r.err != nil {
		switch {
		case errors.Is(r.err, errEmbedAnswer):
			return &Error{Status: http.StatusBadGateway, Kind: dialect.Upstream, Message: "the upstream's embeddings answer could not be read", Err: r.err}
		case errors.Is(r.err, errEmbedRead) && c.r.Context().Err() == nil:
			return &failure{err: g.upstreamFailureAfterStatus(x, r.err)}
		}
		return retryableSend(x, g.upstreamFailure(c.r, x, r.err))
	}
	x.upstreamStatus = r.resp.StatusCode
	keepUpstreamIDs(c.w.Header(), r.resp.Header, x.upDialect)
	_, err := g.translatedFailure(c, r.resp, dialect.For(x.dialect, x.upDialect))
	return err
}

// errEmbedAnswer marks an upstream answer whose vectors could not be
// read; errEmbedRead one that failed to arrive whole.
var (
	errEmbedAnswer = errors.New("unreadable embeddings answer")
	errEmbedRead   = errors.New("reading the upstream's embeddings")
)

// embedParallel is how many batches of wire go at once: one for APIs
// that take many inputs a request, a few for one-input APIs (2,048 inputs
// one by one would take minutes).
func embedParallel(wire *embeddings.Wire) int {
	if wire.MaxBatch == 1 {
		return 8
	}
	return 1
}

// embedBatch sends one batch's request (of n inputs) to t and reads its
// vectors. It touches nothing of the exchange: batches may run at once.
func embedBatch(ctx context.Context, req *embeddings.Request, t *route.Target, wire *embeddings.Wire, header http.Header, body []byte, n int, log *slog.Logger, id string) embedResult {
	resp, err := t.Provider.Do(ctx, &provider.Request{Op: dialect.Embed, Dialect: t.Provider.Dialect(), Model: t.Model,
		Body: provider.Body{body}, Header: header.Clone(), Log: log, ID: id})
	if err != nil {
		return embedResult{err: err}
	}
	defer resp.Body.Close()
	answer, err := readAnswer(resp)
	if err != nil {
		if errors.Is(err, errEmbedAnswer) {
			return embedResult{err: err}
		}
		return embedResult{err: fmt.Errorf("%w: %w", errEmbedRead, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body = io.NopCloser(bytes.NewReader(answer))
		return embedResult{resp: resp}
	}
	// An answer in floats copies the upstream's numbers as they are.
	vs, tokens, err := wire.Answer(answer, n, req.Format != "base64")
	if err != nil {
		return embedResult{err: fmt.Errorf("%w: %w", errEmbedAnswer, err)}
	}
	if tokens == 0 {
		// Bedrock counts every model's input in a header.
		tokens, _ = strconv.Atoi(resp.Header.Get("X-Amzn-Bedrock-Input-Token-Count"))
	}
	// Vectors read raw point into the answer: they are copied out, without
	// its white space, so that the answer's buffer goes now.
	embeddings.Compact(vs)
	return embedResult{vectors: vs, tokens: tokens}
}

// embedTokens counts an embeddings request's inputs with the tokenizer,
// for an answer that reports no usage: text is encoded (at most
// promptBudget bytes of it, the rest at the rate measured), token arrays
// count their length.
func embedTokens(ctx context.Context, req *embeddings.Request) int64 {
	if err := counting.acquire(ctx); err != nil {
		n := 0
		for _, in := range req.Inputs {
			n += len(in.Tokens) + (len(in.Text)+3)/4
		}
		return int64(n)
	}
	defer counting.release()
	c := tokens.Counter{Context: ctx, Budget: promptBudget}
	for _, in := range req.Inputs {
		if in.Tokens != nil {
			c.AddTokens(len(in.Tokens))
			continue
		}
		c.Add(in.Text)
	}
	return int64(c.Tokens())
}

// embedUsage fills in the input tokens of an embeddings answer relayed
// without usage, counted locally, and marks them as estimated.
func (c *call) embedUsage() {
	x := c.x
	if x.status != http.StatusOK || x.usage.TotalInput() > 0 || c.embed == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.ctx), estimateTime)
	defer cancel()
	x.usage.Input = embedTokens(ctx, c.embed)
	x.estimated = true
	x.costed = false
}

// readAnswer reads a whole upstream answer of at most maxUpstreamBody
// bytes, into a buffer of its length when the upstream says it.
func readAnswer(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= 1<<20 {
		b := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody+1))
	if err == nil && len(b) > maxUpstreamBody {
		return nil, fmt.Errorf("%w: larger than %d bytes", errEmbedAnswer, maxUpstreamBody)
	}
	return b, err
}

// answerEnds keeps the first and the last endsSize bytes of an answer
// read through it, where an embeddings answer's usage is (OpenAI writes it
// last, some servers first), so that the answer need not be kept whole.
type answerEnds struct {
	io.ReadCloser
	head, tail []byte
}

const endsSize = 4 << 10

func (a *answerEnds) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	b := p[:n]
	if room := endsSize - len(a.head); room > 0 {
		k := min(room, len(b))
		a.head = append(a.head, b[:k]...)
	}
	if len(b) >= endsSize {
		a.tail = append(a.tail[:0], b[len(b)-endsSize:]...)
	} else {
		a.tail = append(a.tail, b...)
		if over := len(a.tail) - endsSize; over > 0 {
			a.tail = append(a.tail[:0], a.tail[over:]...)
		}
	}
	return n, err
}

// usage reads the answer's usage object from its ends.
func (a *answerEnds) usage(u *meter.Usage) {
	for _, end := range [][]byte{a.tail, a.head} {
		i := bytes.LastIndex(end, []byte(`"usage"`))
		if i < 0 {
			continue
		}
		rest := end[i+len(`"usage"`):]
		j := bytes.IndexByte(rest, '{')
		if j < 0 || len(bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(rest[:j]), []byte(":")))) != 0 {
			continue
		}
		if v := gjson.ParseBytes(rest[j:]); v.IsObject() {
			openai.SetUsage(u, v.Raw)
			return
		}
	}
}
