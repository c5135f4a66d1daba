package chaos

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// The ways a fake upstream fails.
const (
	healthy = iota
	rateLimited
	serverError
	overloaded
	connReset
	slowFirstByte
	streamIdle
	streamCut
	modes
)

var modeNames = [modes]string{"healthy", "429", "500", "overloaded", "reset", "slow first byte", "stream idle", "stream cut"}

// fake is an upstream of one protocol that fails a share of its requests,
// drawing each request's fate from a seeded generator.
type fake struct {
	*httptest.Server
	anthropic bool
	failShare float64

	mu       sync.Mutex
	rng      *rand.Rand
	injected [modes]int
}

func newFake(anthropic bool, seed uint64, failShare float64) *fake {
	f := &fake{anthropic: anthropic, failShare: failShare, rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

func (f *fake) draw() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := healthy
	if f.rng.Float64() < f.failShare {
		m = 1 + f.rng.IntN(modes-1)
	}
	f.injected[m]++
	return m
}

// failures is how many requests the fake failed, by mode.
func (f *fake) failures() (total int, by map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	by = map[string]int{}
	for m := 1; m < modes; m++ {
		total += f.injected[m]
		by[modeNames[m]] = f.injected[m]
	}
	return total, by
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	stream := gjson.GetBytes(body.Bytes(), "stream").Bool()
	mode := f.draw()
	switch mode {
	case rateLimited:
		w.Header().Set("Retry-After", "1")
		f.error(w, 429, "rate_limit_error")
	case serverError:
		f.error(w, 500, "api_error")
	case overloaded:
		if f.anthropic {
			f.error(w, 529, "overloaded_error")
		} else {
			f.error(w, 503, "server_error")
		}
	case connReset:
		reset(w)
	case slowFirstByte:
		sleep(r, 2*time.Second) // past the provider's first_byte timeout
		f.answer(w, stream, false)
	case streamIdle:
		if !stream {
			sleep(r, 2*time.Second)
			f.answer(w, false, false)
			return
		}
		f.answer(w, true, true) // some events, then silence past the idle timeout
		sleep(r, 2*time.Second)
	case streamCut:
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte(`{"id":"msg_cut","type":"mess`))
			reset(w)
			return
		}
		f.answer(w, true, true)
		reset(w)
	default:
		f.answer(w, stream, false)
	}
}

func (f *fake) error(w http.ResponseWriter, status int, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if f.anthropic {
		w.Write([]byte(`{"type":"error","error":{"type":"` + typ + `","message":"injected"}}`))
	} else {
		w.Write([]byte(`{"error":{"message":"injected","type":"` + typ + `","code":null}}`))
	}
}

// answer writes a healthy answer, or with partial only its first half.
func (f *fake) answer(w http.ResponseWriter, stream, partial bool) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		if f.anthropic {
			w.Write(upstreamtest.File("anthropic_message.json"))
		} else {
			w.Write(upstreamtest.File("openai_completion.json"))
		}
		return
	}
	events := upstreamtest.Events("openai_stream.sse")
	if f.anthropic {
		events = upstreamtest.Events("anthropic_stream.sse")
	}
	if partial {
		events = events[:len(events)/2]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for _, ev := range events {
		w.Write(ev)
		rc.Flush()
	}
}

// reset ends the connection abruptly, mid-answer or before any.
func reset(w http.ResponseWriter) {
	http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}

func sleep(r *http.Request, d time.Duration) {
	select {
	case <-time.After(d):
	case <-r.Context().Done():
	}
}
