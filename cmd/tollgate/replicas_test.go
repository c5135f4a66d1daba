package main_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// Fixed usage of every fake answer: 100 prompt and 50 completion tokens,
// at 1 and 2 USD per million: 200,000 nano-USD a request.
const (
	fakePrompt, fakeCompletion = 100, 50
	fakeCost                   = fakePrompt*1000 + fakeCompletion*2000
)

// fakeOpenAI answers chat completions, streamed or not, after a pause, so
// that requests overlap; it counts the requests in flight whose body holds
// marker.
type fakeOpenAI struct {
	*upstreamtest.Server
	marker            string
	inflight, maxSeen atomic.Int64
}

func newFakeOpenAI(marker string) *fakeOpenAI {
	f := &fakeOpenAI{marker: marker}
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`, fakePrompt, fakeCompletion, fakePrompt+fakeCompletion)
	f.Server = upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		if strings.Contains(string(r.Body), f.marker) {
			n := f.inflight.Add(1)
			for m := f.maxSeen.Load(); n > m && !f.maxSeen.CompareAndSwap(m, n); m = f.maxSeen.Load() {
			}
			defer f.inflight.Add(-1)
		}
		time.Sleep(20 * time.Millisecond)
		if !gjson.GetBytes(r.Body, "stream").Bool() {
			return upstreamtest.Reply{Body: []byte(`{"id":"c1","object":"chat.completion","created":1,"model":"fake","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":` + usage + `}`)}
		}
		return upstreamtest.Reply{Gap: 2 * time.Millisecond, Events: [][]byte{
			[]byte(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}` + "\n\n"),
			[]byte(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"),
			[]byte(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[],"usage":` + usage + `}` + "\n\n"),
			[]byte("data: [DONE]\n\n"),
		}}
	})
	return f
}

func requireServices(t *testing.T) (pgURL, redisURL string) {
	t.Helper()
	redisURL = os.Getenv("TOLLGATE_TEST_REDIS_URL")
	if os.Getenv("TOLLGATE_TEST_POSTGRES_URL") == "" || redisURL == "" {
		t.Skip("TOLLGATE_TEST_POSTGRES_URL and TOLLGATE_TEST_REDIS_URL must both be set for the multi-replica tests")
	}
	_, pgURL = storetest.SchemaURL(t)
	return pgURL, redisURL
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tollgate.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// replicaConfig is one configuration for every replica: one database, one Redis.
// Redis calls may take 2 s: the tests check what replicas share, on a
// machine busy with other tests, not how fast Redis answers.
func replicaConfig(pgURL, redisURL, onError, upstream string) string {
	return fmt.Sprintf(`
auth: { master_key: %q }
database: { url: %q }
redis: { url: %q, on_error: %s, timeout: 2s }
providers:
  - { name: up, type: openai, base_url: %q, api_key: x }
models:
  - { name: m, targets: [ { provider: up, model: fake } ], pricing: { input: "1", output: "2" } }
`, mk, pgURL, redisURL, onError, upstream+"/v1")
}

// createKey makes a virtual key through a replica's admin API.
func createKey(t *testing.T, base, body string) (id, secret string) {
	t.Helper()
	resp, out := post(t, base+"/admin/keys", body, "Authorization: Bearer "+mk)
	if resp.StatusCode != 201 {
		t.Fatalf("create key: %d %s", resp.StatusCode, out)
	}
	return gjson.Get(out, "id").String(), gjson.Get(out, "key").String()
}

// load fires n requests at key through the replicas, c at a time, a seeded
// mix of streaming and not, Anthropic and OpenAI clients; it returns the
// count per status.
func load(t *testing.T, bases []string, key, marker string, n, c int, seed uint64) map[int]int {
	t.Helper()
	content := marker + " " + strings.Repeat("lorem ipsum ", 45) // about 140 tokens estimated: more than the 100 charged
	rng := rand.New(rand.NewPCG(seed, 0))
	type job struct {
		base           string
		stream, oldAPI bool
	}
	jobs := make(chan job, n)
	for i := 0; i < n; i++ {
		jobs <- job{bases[i%len(bases)], rng.IntN(2) == 0, rng.IntN(2) == 0}
	}
	close(jobs)
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				body := fmt.Sprintf(`{"model":"m","max_tokens":%d,"stream":%t,"messages":[{"role":"user","content":%q}]}`, fakeCompletion, j.stream, content)
				path := "/v1/chat/completions"
				if j.oldAPI {
					path = "/v1/messages"
				}
				req, _ := http.NewRequest("POST", j.base+path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Anthropic-Version", "2023-06-01")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("request: %v", err)
					continue
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && j.stream && !strings.Contains(string(out), "[DONE]") && !strings.Contains(string(out), "message_stop") {
					t.Errorf("stream did not finish: %s", out)
				}
				if resp.StatusCode != 200 && resp.StatusCode != 429 {
					t.Errorf("status %d: %s", resp.StatusCode, out)
				}
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return statuses
}

func TestReplicasShareLimitsAndBudgets(t *testing.T) {
	pgURL, redisURL := requireServices(t)
	up := newFakeOpenAI("parallel-marker")
	defer up.Close()
	cfg := writeConfig(t, replicaConfig(pgURL, redisURL, "fail_closed", up.URL))
	var replicas []*server
	var bases []string
	for i := 0; i < 3; i++ {
		s := startServe(t, buildBinary(t), nil, "--config", cfg, "--addr", "127.0.0.1:0")
		replicas = append(replicas, s)
		bases = append(bases, "http://"+s.addr)
	}
	const (
		rpm      = 100
		tpm      = 15_000
		budget   = 10_000_000 // nano-USD: 0.01 USD, 50 requests' worth
		parallel = 4
	)
	rpmKey, rpmSecret := createKey(t, bases[0], fmt.Sprintf(`{"name":"rpm","limits":{"rpm":%d}}`, rpm))
	tpmKey, tpmSecret := createKey(t, bases[1], fmt.Sprintf(`{"name":"tpm","limits":{"tpm":%d}}`, tpm))
	budgetKey, budgetSecret := createKey(t, bases[2], `{"name":"budget","limits":{"budget_usd":"0.01","rpm":1000,"tpm":1000000}}`)
	parKey, parSecret := createKey(t, bases[0], fmt.Sprintf(`{"name":"parallel","limits":{"max_parallel":%d}}`, parallel))

	sent := map[string]int{}
	run := func(name, id, secret, marker string, n int, seed uint64) map[int]int {
		st := load(t, bases, secret, marker, n, 30, seed)
		sent[id] = n
		t.Logf("%s: %v", name, st)
		return st
	}
	rpmSt := run("rpm", rpmKey, rpmSecret, "rpm", 3*rpm, 1)
	tpmSt := run("tpm", tpmKey, tpmSecret, "tpm", 300, 2)
	budgetSt := run("budget", budgetKey, budgetSecret, "budget", 150, 3)
	parSt := run("parallel", parKey, parSecret, "parallel-marker", 120, 4)

	var refusedRequests float64
	for _, s := range replicas {
		refusedRequests += scrapeLabelled(t, s, `tollgate_limiter_refusals_total{limit="requests"}`)
	}
	if refusedRequests != float64(rpmSt[429]) {
		t.Errorf("refusals by rpm: metrics say %v, clients saw %d", refusedRequests, rpmSt[429])
	}

	// The counters as Redis holds them, before the replicas go.
	rc := redisClient(t, redisURL)
	committed, _ := rc.HGet(context.Background(), "tollgate:key:"+budgetKey+":usd:t", "c").Int64()
	reserved, _ := rc.HGet(context.Background(), "tollgate:key:"+budgetKey+":usd:t", "r").Int64()

	for _, s := range replicas {
		s.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, s := range replicas {
		if err := <-s.done; err != nil {
			t.Fatalf("replica exit: %v\n%s", err, s.stderrText())
		}
	}
	db, err := store.Open(context.Background(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Requests(context.Background(), store.RequestFilter{Limit: store.MaxRequestsPage - 1})
	if err != nil {
		t.Fatal(err)
	}
	type sums struct{ records, served, tokens, cost int64 }
	byKey := map[string]*sums{}
	ids := map[string]bool{}
	for _, r := range recs {
		if ids[r.ID] {
			t.Errorf("request %s recorded twice", r.ID)
		}
		ids[r.ID] = true
		s := byKey[r.KeyID]
		if s == nil {
			s = &sums{}
			byKey[r.KeyID] = s
		}
		s.records++
		if r.Status == 200 {
			s.served++
		}
		s.tokens += r.Input + r.Output
		if r.CostNanoUSD != nil {
			s.cost += *r.CostNanoUSD
		}
	}
	// Exactly one record per request, refused ones included.
	for id, n := range sent {
		if got := byKey[id]; got == nil || got.records != int64(n) {
			t.Errorf("key %s: %v records for %d requests", id, got, n)
		}
	}
	// Requests per minute: at most 1% over (all of the load fell in one minute).
	if a := rpmSt[200]; a < rpm || a > rpm+rpm/100 {
		t.Errorf("rpm %d: admitted %d", rpm, a)
	}
	// Tokens per minute: the tokens of the admitted requests.
	tp := byKey[tpmKey]
	if tp.tokens > tpm+tpm/100 || tp.tokens < tpm/2 {
		t.Errorf("tpm %d: admitted requests used %d tokens", tpm, tp.tokens)
	}
	// Budget: spend within one reservation of the budget, and the counter
	// saw exactly what the ledger holds.
	bp := byKey[budgetKey]
	reservation := int64(160*1000 + fakeCompletion*2000) // the most one request reserves
	if bp.cost > budget+reservation || bp.cost < budget/2 {
		t.Errorf("budget %d: spent %d", budget, bp.cost)
	}
	if committed != bp.cost || reserved != 0 {
		t.Errorf("Redis counter: committed %d, reserved %d; the ledger holds %d", committed, reserved, bp.cost)
	}
	if parSt[200] == 0 || up.maxSeen.Load() > parallel {
		t.Errorf("max_parallel %d: %d admitted, %d in flight at once upstream", parallel, parSt[200], up.maxSeen.Load())
	}
	t.Logf("overshoot: rpm %d admitted of %d (%+.2f%%); tpm %d tokens of %d (%+.2f%%); budget %d nano-USD of %d (%+.2f%%, %d requests); parallel %d of %d",
		rpmSt[200], rpm, pct(int64(rpmSt[200]), rpm), tp.tokens, tpm, pct(tp.tokens, tpm), bp.cost, budget, pct(bp.cost, budget), budgetSt[200], up.maxSeen.Load(), parallel)
	_ = tpmSt
}

func pct(got, limit int64) float64 { return 100 * float64(got-limit) / float64(limit) }

func redisClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// scrapeLabelled reads one sample, labels included, from a replica's /metrics.
func scrapeLabelled(t *testing.T, s *server, sample string) float64 {
	t.Helper()
	_, text := get(t, s, "/metrics")
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	t.Fatalf("no sample %s in /metrics", sample)
	return 0
}
