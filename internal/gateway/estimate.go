package gateway

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/sse"
	"github.com/tollgate/tollgate/internal/tokens"
)

// A stream whose usage never arrives (the client left before the final
// usage event, or the upstream broke off) still cost the operator what the
// upstream generated. Its record then carries an estimate, flagged as one:
// input from the prompt, counted with the tokenizer, and output from the
// events actually relayed.
//
// Relaying must stay cheap, so the relay does not decode events to keep
// their text: it counts the bytes of every event and keeps the first
// sampleBytes of them. At the end, the text in the sample is counted with
// the tokenizer and the rest of the stream at the same tokens per byte.
// The sample is held for all of a stream's life, so it is kept to a page:
// smaller, it may hold only a stream's opening events (a Responses
// stream's response.created and response.in_progress repeat the whole
// response object, about 1 KiB with no instructions at all) and no text,
// and the estimate of a stream the client left falls to nothing.
const sampleBytes = 4 << 10

// bytesPerToken is the rate used when the sample holds no whole event (a
// first event larger than the sample): about what English text and its
// JSON scaffolding take, erring high rather than billing nothing.
const bytesPerToken = 4

// promptBudget bounds the prompt bytes the tokenizer reads for an
// estimate; the rest is counted at the measured rate.
const promptBudget = 1 << 20

// estimateTime bounds an estimate, waiting for a turn to count included:
// the client has left, so nothing else ends it. Counting promptBudget
// bytes of the worst text takes about 0.2 s of a core; what is not
// counted by then is estimated at the rate measured, as past the budget.
const estimateTime = 2 * time.Second

// relayed is what a stream relayed, for the estimate.
type relayed struct {
	bytes  int64
	sample []byte
}

var samplePool = sync.Pool{New: func() any { b := make([]byte, 0, sampleBytes); return &b }}

// add notes one relayed event.
func (r *relayed) add(ev []byte) {
	if r == nil {
		return
	}
	r.bytes += int64(len(ev))
	if len(r.sample) < sampleBytes {
		if r.sample == nil {
			r.sample = (*samplePool.Get().(*[]byte))[:0]
		}
		r.sample = append(r.sample, ev[:min(len(ev), sampleBytes-len(r.sample))]...)
	}
}

// release returns the sample's buffer.
func (r *relayed) release() {
	if r != nil && r.sample != nil {
		b := r.sample[:0]
		r.sample = nil
		samplePool.Put(&b)
	}
}

// outputTokens estimates the tokens of generated text in the stream, from
// the upstream's events, whose generated text is at paths.
func (r *relayed) outputTokens(ctx context.Context, paths []string) int64 {
	if r.bytes == 0 {
		return 0
	}
	c := tokens.Counter{Context: ctx}
	var f sse.Fields
	b := r.sample
	for len(b) > 0 {
		k := sse.Split(b)
		if k == 0 {
			break // the sample's last event was cut
		}
		f.Parse(b[:k])
		b = b[k:]
		addGenerated(&c, f.Data, paths)
	}
	sampled := len(r.sample) - len(b)
	if sampled == 0 {
		return (r.bytes + bytesPerToken - 1) / bytesPerToken
	}
	rate := float64(c.Tokens()) / float64(sampled)
	return int64(rate*float64(r.bytes) + 0.5)
}

func addGenerated(c *tokens.Counter, data []byte, paths []string) {
	if len(data) == 0 || data[0] != '{' {
		return
	}
	for _, r := range gjson.GetManyBytes(data, paths...) {
		addStrings(c, r)
	}
}

func addStrings(c *tokens.Counter, r gjson.Result) {
	switch {
	case r.Type == gjson.String:
		c.Add(r.Str)
	case r.IsArray():
		r.ForEach(func(_, v gjson.Result) bool { addStrings(c, v); return true })
	}
}

// promptTokens counts a request's prompt with the tokenizer, at most
// promptBudget bytes of it and until ctx ends; the rest is estimated at
// the rate measured (or, if there was no turn to count, as for the
// reservation).
func promptTokens(ctx context.Context, d *dialect.Dialect, body []byte) int64 {
	c := tokens.Counter{Context: ctx, Budget: promptBudget}
	if err := counting.acquire(ctx); err != nil {
		return reserveInputTokens(body)
	}
	defer counting.release()
	d.CountPrompt(&c, body)
	return int64(c.Tokens())
}

// estimateUsage fills in what a stream's usage lacks when it ended
// without its final usage: output from what was relayed (never less than
// the upstream reported so far), input from the prompt when the upstream
// reported none.
func (x *exchange) estimateUsage() {
	if x.relayed == nil || x.relayed.bytes == 0 || !x.clientGone && x.err == nil {
		return
	}
	// The client's context is likely over: the count is bounded by its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.ctx), estimateTime)
	defer cancel()
	body := x.reqBody
	if out := x.relayed.outputTokens(ctx, x.upDialect.Generated); out > x.usage.Output {
		x.usage.Output = out
		x.estimated = true
	}
	u := x.usage
	if u.TotalInput() == 0 && len(body) > 0 {
		x.usage.Input = promptTokens(ctx, x.dialect, body)
		x.estimated = true
	}
	if x.estimated {
		x.costed = false // the cost follows the new usage
	}
}

// counting bounds how many prompts are counted with the tokenizer at once,
// process-wide: each count takes a core and some memory.
var counting = newSemaphore(runtime.GOMAXPROCS(0))

type semaphore chan struct{}

func newSemaphore(n int) semaphore { return make(semaphore, max(n, 1)) }

// acquire waits for a turn until ctx ends; a context already ended gets
// none (select would pick at random between the two).
func (s semaphore) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s semaphore) release() { <-s }
