package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// A coding agent's tool loop, replayed through the gateway as an OpenAI
// Chat client on a Claude model: 30 turns, the prompt growing from 5k to
// 120k tokens, against fake Anthropic upstreams that cache prefixes as
// Anthropic documents (per upstream key, at breakpoints, 20-block
// look-back, minimum length). The figures come from the ledger.

const replayTurns = 30

// replayRun is one replay's outcome, turn by turn, from the ledger.
type replayRun struct {
	recs       []store.Request // in turn order
	breakpoint []string        // tollgate-cache-breakpoints of each answer
	creds      map[string]map[string]bool
	// metrics: tollgate_cache_savings_nano_usd_total and
	// tollgate_cache_write_premium_nano_usd_total, summed over labels.
	readSaved, premium float64
}

// readShare is the share of input tokens read from the cache over turns
// from (0-based) on.
func (r replayRun) readShare(from int) float64 {
	var read, all int64
	for _, rec := range r.recs[from:] {
		read += rec.CacheRead
		all += rec.CacheRead + rec.Input + rec.CacheWrite5m + rec.CacheWrite1h
	}
	return float64(read) / float64(all)
}

func (r replayRun) cost() int64 {
	var n int64
	for _, rec := range r.recs {
		n += *rec.CostNanoUSD
	}
	return n
}

// replayOptions shape one replay.
type replayOptions struct {
	mode    string // prompt_cache mode
	targets int    // targets of the model, one provider each
	keys    int    // pool keys per provider
	killAt  int    // the turn at which the target serving the conversation fails for good; 0: never
}

func replay(t *testing.T, o replayOptions) replayRun {
	t.Helper()
	ctx := context.Background()
	db, rec := ledgerDB(t)
	var providers, targets strings.Builder
	down := make([]atomic.Bool, o.targets)
	fakes := make([]*upstreamtest.CachingAnthropic, o.targets)
	for i := range o.targets {
		var keys []string
		for k := range o.keys {
			keys = append(keys, fmt.Sprintf("key-%d-%d", i, k))
		}
		fakes[i] = upstreamtest.NewCachingAnthropic(upstreamtest.CacheOptions{Keys: keys, MinTokens: 1024,
			Answer: upstreamtest.AgentAnswer, Down: down[i].Load})
		t.Cleanup(fakes[i].Close)
		fmt.Fprintf(&providers, "  - { name: ant%d, type: anthropic, base_url: %q, api_keys: [%s] }\n", i, fakes[i].URL(), strings.Join(keys, ", "))
		fmt.Fprintf(&targets, "{ provider: ant%d, model: claude-sonnet-x }, ", i)
	}
	gw := serveYAML(t, `
providers:
`+providers.String()+`
models:
  - name: claude
    targets: [ `+strings.TrimSuffix(targets.String(), ", ")+` ]
    prompt_cache: { mode: `+o.mode+` }
    pricing: { input: "3", output: "15", cache_read: "0.30", cache_write_5m: "3.75", cache_write_1h: "6" }
`, cli.Options{Ledger: rec})

	run := replayRun{creds: map[string]map[string]bool{}}
	agent := upstreamtest.NewAgentChat("claude", replayTurns, 5000, 120000)
	ids := make([]string, 0, replayTurns)
	serving, served := -1, make([]int, o.targets)
	for turn := range replayTurns {
		if o.killAt > 0 && turn == o.killAt {
			down[serving].Store(true)
		}
		req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions", strings.NewReader(string(agent.Request(false))))
		req.Header.Set("Authorization", "Bearer "+masterKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("turn %d: status %d: %s", turn, resp.StatusCode, body)
		}
		ids = append(ids, resp.Header.Get("Tollgate-Request-Id"))
		run.breakpoint = append(run.breakpoint, resp.Header.Get("Tollgate-Cache-Breakpoints"))
		if err := agent.Reply([]byte(gjson.GetBytes(body, "choices.0.message").Raw)); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		for i, f := range fakes { // the fake whose answers grew served the turn
			if n := answered(f); n > served[i] {
				serving, served[i] = i, n
			}
		}
	}
	for i, f := range fakes {
		for _, c := range f.Calls() {
			if c.Status == http.StatusOK {
				if run.creds[fmt.Sprint(i)] == nil {
					run.creds[fmt.Sprint(i)] = map[string]bool{}
				}
				run.creds[fmt.Sprint(i)][c.Credential] = true
			}
		}
	}

	run.readSaved = metricSum(t, gw, "tollgate_cache_savings_nano_usd_total")
	run.premium = metricSum(t, gw, "tollgate_cache_write_premium_nano_usd_total")

	byID := map[string]store.Request{}
	deadline := time.Now().Add(10 * time.Second)
	for len(byID) < replayTurns && time.Now().Before(deadline) {
		recs, err := db.Requests(ctx, store.RequestFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			byID[r.ID] = r
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			t.Fatalf("no ledger record for %s", id)
		}
		run.recs = append(run.recs, r)
	}
	return run
}

func TestPromptCacheReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30-turn replay of 5k to 120k tokens: go test without -short runs it")
	}
	auto := replay(t, replayOptions{mode: "auto", targets: 1, keys: 1})
	off := replay(t, replayOptions{mode: "off", targets: 1, keys: 1})

	share := auto.readShare(1)
	saved := 1 - float64(auto.cost())/float64(off.cost())
	t.Logf("one target: read share from turn 2 on %.1f%%; cost $%.4f with breakpoints, $%.4f without (%.1f%% less)",
		100*share, float64(auto.cost())/1e9, float64(off.cost())/1e9, 100*saved)
	if share < 0.80 {
		t.Errorf("read share from turn 2 on is %.1f%%, want at least 80%%", 100*share)
	}
	if saved < 0.60 {
		t.Errorf("caching cut the cost by %.1f%%, want at least 60%%", 100*saved)
	}
	if off.readShare(0) != 0 || auto.breakpoint[0] != "3" || auto.breakpoint[5] != "4" || off.breakpoint[5] != "" {
		t.Errorf("breakpoints added: auto %v, off %v; off read share %.2f", auto.breakpoint, off.breakpoint, off.readShare(0))
	}
	// The ledger's savings are what the replay saved: the same tokens all
	// billed as input (the replay without caching, whose outputs are the
	// same) less what they cost, to a nano-USD a request.
	var savings int64
	for _, rec := range auto.recs {
		savings += *rec.CacheSavingsNano
	}
	if d := savings - (off.cost() - auto.cost()); d < -replayTurns || d > replayTurns {
		t.Errorf("the ledger's savings are %d nano-USD, the costs differ by %d", savings, off.cost()-auto.cost())
	}
	if net := auto.readSaved - auto.premium; auto.premium <= 0 || net != float64(savings) {
		t.Errorf("metrics: %.0f saved by reads, %.0f of write premium; the ledger's savings are %d", auto.readSaved, auto.premium, savings)
	}
	for i, rec := range auto.recs[1:] {
		if rec.CacheRead == 0 {
			t.Errorf("turn %d read nothing from the cache", i+2)
		}
	}

	pooled := replay(t, replayOptions{mode: "auto", targets: 2, keys: 3})
	pshare := pooled.readShare(1)
	t.Logf("2 targets x 3 keys: read share from turn 2 on %.1f%%", 100*pshare)
	if d := 100 * (share - pshare); d > 5 || d < -5 {
		t.Errorf("2 targets x 3 keys read %.1f%%, %.1f points from one target's", 100*pshare, d)
	}
	used := 0
	for target, creds := range pooled.creds {
		used++
		if len(creds) != 1 {
			t.Errorf("target %s: the conversation used keys %v, want one", target, creds)
		}
	}
	if used != 1 {
		t.Errorf("the conversation used %d targets, want one: %v", used, pooled.creds)
	}

	killed := replay(t, replayOptions{mode: "auto", targets: 2, keys: 3, killAt: 15})
	var moves []int
	for i := 1; i < replayTurns; i++ {
		if killed.recs[i].Provider != killed.recs[i-1].Provider {
			moves = append(moves, i)
		}
	}
	if len(moves) != 1 || moves[0] != 15 {
		t.Fatalf("the conversation moved at turns %v, want once, at 15 (providers %v)", moves, providersOf(killed.recs))
	}
	at := killed.recs[15]
	if at.CacheRead != 0 || at.CacheWrite5m == 0 {
		t.Errorf("the turn that moved read %d and wrote %d, want a cold write", at.CacheRead, at.CacheWrite5m)
	}
	rewarmed := replayRun{recs: killed.recs[16:]}
	t.Logf("killed at turn 16: read share after re-warming %.1f%%", 100*rewarmed.readShare(0))
	if rewarmed.readShare(0) < 0.80 {
		t.Errorf("after the move the read share is %.1f%%, want at least 80%%", 100*rewarmed.readShare(0))
	}
}

// serveYAML serves a gateway configured by yaml, with o's database and
// ledger, until the test ends.
func serveYAML(t *testing.T, yaml string, o cli.Options) *httptest.Server {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	o.MasterKey, o.Logger = masterKey, slog.New(slog.DiscardHandler)
	built, err := cli.Build(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(built.Handler)
	t.Cleanup(func() { gw.Close(); built.Close() })
	return gw
}

// metricSum sums a metric's samples on the gateway's /metrics.
func metricSum(t *testing.T, gw *httptest.Server, name string) float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", gw.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+masterKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum := 0.0
	for _, line := range strings.Split(string(readAll(t, resp.Body)), "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			sum += v
		}
	}
	return sum
}

// answered counts a fake's successful answers.
func answered(f *upstreamtest.CachingAnthropic) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Status == http.StatusOK {
			n++
		}
	}
	return n
}

func providersOf(recs []store.Request) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Provider)
	}
	return out
}
