// Command tollgate-bench measures, side by side in one run, what a proxy in
// front of an LLM provider costs: tollgate against a bare Go reverse proxy
// and nginx, all relaying to the same fake upstream on 127.0.0.1.
//
// # Targets
//
//   - direct: the load client talks to the fake upstream itself. This is
//     the floor every other latency is compared with.
//   - reverseproxy: a bare httputil.ReverseProxy (this binary re-executed as
//     "tollgate-bench proxy"), flushing every write. The cheapest thing a Go
//     gateway could be.
//   - nginx: nginx 1 worker, no master process, upstream keep-alive, no
//     request or response buffering. Skipped when nginx is not on PATH.
//   - tollgate: `tollgate serve` with a generated config routing the models
//     bench-o and bench-a to the fake upstream, logging one JSON line per
//     request to a file, as in production: the load uses a virtual key
//     (looked up through the key cache) and every request is recorded in
//     the usage ledger on the embedded SQLite database.
//   - tollgate-limited: tollgate with a key whose rpm, tpm, max_parallel
//     and budget are checked (in process) on every request.
//   - tollgate-stateless: the same with database.url: none, so the master
//     key only and no ledger: what keys and the ledger cost is the
//     difference between the two.
//   - tollgate-baseline: the "tollgate" target run from another binary
//     (-baseline PATH), such as a build of an earlier commit, so that two
//     builds are measured side by side in one run. Not in the default set.
//   - peers (cliproxyapi, bifrost, bifrost-nolog, gomodel, new-api): other
//     gateways, built on first use from their pinned releases on the Go
//     module proxy into $XDG_CACHE_HOME/tollgate-bench (or
//     ~/.cache/tollgate-bench), never into the repository, and configured
//     against the same fake upstream with a client key and their request
//     accounting on; see peers.go. They are measured on the OpenAI chat
//     workloads, the Anthropic ones and the translated ones. A peer that
//     cannot be built or run here is skipped with the reason, which the
//     report and the published page show. Not in the default set.
//
// The fake upstream ("tollgate-bench upstream") is a process of its own,
// so its CPU is never charged to a proxy. It answers at once, with no
// simulated thinking time: what is measured is the relaying alone.
//
// # Workloads
//
//   - small: ~1 KB OpenAI chat request, ~600 B JSON answer.
//   - large: ~100 KB request (one long user message), same answer.
//   - stream: ~1 KB request with stream:true; 50 content events, each
//     written and flushed separately by the upstream.
//   - anthropic, stream-anthropic (optional): ~1 KB Messages requests over
//     /v1/messages, whole and streamed.
//   - bedrock, stream-bedrock (optional): the same to a tollgate model on the
//     fake upstream's Bedrock endpoints (signed with SigV4, streamed in
//     event-stream frames); compare them with anthropic and stream-anthropic.
//   - gemini, stream-gemini (optional): the same to a model on the fake
//     upstream's Gemini API endpoints, through the translation lane.
//   - small-translated, stream-translated (optional): OpenAI requests to a
//     tollgate model whose upstream speaks the Anthropic API, so they take
//     the translation lane; compare them with tollgate's small and stream.
//   - responses, stream-responses (optional): the same over /v1/responses,
//     to a Responses upstream (tollgate's pass-through lane).
//   - responses-translated, stream-responses-translated (optional):
//     Responses requests to the model with an Anthropic upstream.
//   - responses-gemini, stream-responses-gemini (optional): Responses
//     requests to the model on the fake upstream's Gemini API endpoints.
//   - gemini-client, stream-gemini-client (optional): ~1 KB Gemini API
//     requests (generateContent, streamGenerateContent?alt=sse; the model
//     in the URL, the key in x-goog-api-key) to a model on the fake
//     upstream's Gemini endpoints: tollgate's pass-through lane, which
//     rewrites only the URL's model.
//   - gemini-client-translated, stream-gemini-client-translated
//     (optional): the same to the model with an Anthropic upstream.
//   - embeddings (optional): an OpenAI /v1/embeddings request of 16 texts
//     of 60 bytes, answered with 16 vectors of 1536 floats (~300 KB) and
//     usage; relayed as it is (direct, reverseproxy and nginx take it
//     too); compare it with small.
//   - embeddings-gemini, embeddings-bedrock (optional): the same request
//     to a tollgate model on the fake upstream's Gemini API (one
//     batchEmbedContents, 16 vectors of 768 values) and on its Bedrock
//     (Titan Text Embeddings v2: 16 signed invokes, one 1024-value vector
//     each), through the translation lane; compare them with embeddings.
//
// # Measurements, per target and workload
//
//   - p50/p99: end-to-end time of one request (until the last body byte)
//     at concurrency 1, after a warm-up. The targets take turns in five
//     slices so that drift on the machine hits all of them alike.
//     "+p50"/"+p99" subtract direct's value: the latency the proxy adds.
//     On a shared or virtualised machine, differences of a few tens of µs
//     are noise, and p99 more so than p50.
//   - ttfb: for streams, time until the first complete SSE event arrived.
//   - req/s: throughput with -c keep-alive connections for -d. All
//     processes (load client, upstream, proxy) share the machine's cores,
//     so this is a relative figure, not the proxy's capacity.
//   - CPU/req: CPU time (user+system, all threads) the proxy process used
//     during the concurrent phase divided by the requests completed in it;
//     see procstat.go. This is the most robust figure: it does not depend on
//     how busy the other processes kept the cores. "upstream CPU/req" is the same
//     for the fake upstream, which should be alike for every target.
//   - +p50 (c)/+p99 (c): the latency added at concurrency -c, from the
//     throughput phase, over direct's in its own throughput phase.
//   - cold start: from exec to the first chat request answered 200, polled
//     every 10ms (tollgate's migrate and key creation come before the exec
//     and are not counted).
//   - idle RSS: VmRSS after start-up and 10 requests; peak RSS: VmHWM after
//     all load.
//   - log/req: size of tollgate's log over the requests it was sent.
//   - ratios: tollgate's CPU/req, added p50 and req/s over nginx's,
//     reverseproxy's, tollgate-stateless's and tollgate-baseline's.
//
// # Publishing
//
// -publish DIR runs the whole matrix (every target with the peers, -workloads
// small,large,stream,small-translated,stream-translated, -held 1000,8000 and
// -rounds 3, unless given) and then writes the generated section of
// DIR/benchmarks.md, between the lines <!-- tollgate-bench:begin --> and
// <!-- tollgate-bench:end --> (added after the page's title and first
// paragraph when absent; the rest of the page is left as it is), and the
// graphs DIR/benchmarks/*.svg. The page gives the machine, the versions, the
// date (-date, or the run's), the command, and the tables with ratios to
// nginx:
//
//	go run ./cmd/tollgate-bench -publish docs
//
// Go's goroutine hand-offs between threads cost more on a virtual machine
// than on bare metal; -gomaxprocs 1 runs the Go proxies on one core, like
// nginx's single worker, which shows how much of their latency is that.
//
// Usage:
//
//	go run ./cmd/tollgate-bench [-targets direct,reverseproxy,nginx,tollgate]
//	    [-workloads small,large,stream] [-n 2000] [-c 32] [-d 5s]
//	    [-tollgate PATH] [-baseline PATH] [-json FILE] [-md FILE] [-quick] [-gomaxprocs N] [-keep]
//	    [-publish DIR [-date YYYY-MM-DD]]
//
// Without -tollgate, ./cmd/tollgate of the surrounding module is built into
// a temp dir. Linux only (reads /proc). Only 127.0.0.1 is ever contacted
// (building a peer the first time reads the Go module proxy);
// every child process is ended when the run ends, fails or is interrupted.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// config is the parsed command line.
type config struct {
	targets     []string
	workloads   []workload
	n           int // latency-phase requests for "small"; others scale by NFactor
	minN        int
	c           int
	d           time.Duration
	idleWarm    int
	quick       bool
	tollgateBin string
	baselineBin string // the tollgate-baseline target's binary
	jsonPath    string
	mdPath      string
	keepTmp     bool
	gomaxprocs  int // GOMAXPROCS for the Go proxies; 0 keeps Go's default
	rounds      int // times the workload list is measured; the median round is reported
	held        heldSettings
	publishDir  string        // -publish: the docs directory written after the run
	date        string        // -date: the run's date in the published page
	settle      time.Duration // -settle: rest after the workloads before the after-load RSS
	args        []string
}

var (
	ownTargets     = []string{"direct", "reverseproxy", "nginx", "tollgate", "tollgate-limited", "tollgate-stateless", "tollgate-baseline"}
	knownTargets   = append(slices.Clone(ownTargets), peerNames()...)
	defaultTargets = ownTargets[:len(ownTargets)-1]
	// publishTargets and publishWorkloads are -publish's defaults: every
	// peer next to the references and tollgate's two set-ups.
	publishTargets   = append([]string{"direct", "nginx", "reverseproxy", "tollgate", "tollgate-stateless"}, peerNames()...)
	publishWorkloads = "small,large,stream,stream-anthropic,small-translated,stream-translated"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "upstream":
			os.Exit(runUpstream(os.Args[2:]))
		case "proxy":
			os.Exit(runProxy(os.Args[2:]))
		}
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "tollgate-bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal ends the process at once
	}()
	rep, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tollgate-bench:", err)
		if ctx.Err() != nil {
			os.Exit(130)
		}
		os.Exit(1)
	}
	writeText(os.Stdout, rep)
	if cfg.jsonPath != "" {
		if err := writeJSONFile(cfg.jsonPath, rep); err != nil {
			fmt.Fprintln(os.Stderr, "tollgate-bench:", err)
			os.Exit(1)
		}
	}
	if cfg.mdPath != "" {
		if err := writeMarkdownFile(cfg.mdPath, rep); err != nil {
			fmt.Fprintln(os.Stderr, "tollgate-bench:", err)
			os.Exit(1)
		}
	}
	if cfg.publishDir != "" {
		meta := collectMeta(ctx, cfg, rep)
		if err := publish(cfg.publishDir, rep, meta); err != nil {
			fmt.Fprintln(os.Stderr, "tollgate-bench:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "published %s and %s\n", filepath.Join(cfg.publishDir, "benchmarks.md"), filepath.Join(cfg.publishDir, "benchmarks")+"/*.svg")
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("tollgate-bench", flag.ContinueOnError)
	targets := fs.String("targets", strings.Join(defaultTargets, ","), "comma-separated targets: "+strings.Join(knownTargets, ", "))
	wls := fs.String("workloads", "small,large,stream", "comma-separated workloads: small, large, stream, anthropic, stream-anthropic, small-translated, stream-translated, bedrock, stream-bedrock, gemini, stream-gemini, responses, stream-responses, responses-translated, stream-responses-translated, responses-gemini, stream-responses-gemini, gemini-client, stream-gemini-client, gemini-client-translated, stream-gemini-client-translated, embeddings, embeddings-gemini, embeddings-bedrock")
	n := fs.Int("n", 2000, "timed requests at concurrency 1 for small (large and stream use half)")
	c := fs.Int("c", 32, "concurrency of the throughput / CPU phase")
	d := fs.Duration("d", 5*time.Second, "duration of the throughput / CPU phase, per target and workload")
	quick := fs.Bool("quick", false, "tiny run for smoke tests (-n 60 -d 250ms unless given)")
	tg := fs.String("tollgate", "", "tollgate binary (default: go build ./cmd/tollgate into a temp dir)")
	baseline := fs.String("baseline", "", "another tollgate binary, run as the tollgate-baseline target (added to -targets when set)")
	jsonPath := fs.String("json", "", "also write results as JSON to this file")
	mdPath := fs.String("md", "", "also write results as Markdown to this file")
	keep := fs.Bool("keep", false, "keep the temp dir (configs, logs) and print its path")
	rounds := fs.Int("rounds", 1, "measure the workload list this many times, in turn, and report each result's median round by CPU per request (steadier ratios on a noisy machine)")
	held := fs.String("held", "", "held-streams scenario: comma-separated numbers of streams held open at once (e.g. 1000,8000), each through every target")
	heldEvents := fs.Int("held-events", 20, "held streams: content events per stream")
	heldGap := fs.Duration("held-gap", time.Second, "held streams: time between two events")
	heldAnthropic := fs.Bool("held-anthropic", false, "held streams in the Anthropic Messages protocol, to tollgate's model with an Anthropic upstream (pass-through lane), as Claude Code's are")
	heldBody := fs.Int("held-body", 1<<10, "held streams: request body size in bytes (an agent's turn is 50-200 KB)")
	heldTranslated := fs.Bool("held-translated", false, "held streams on the translation lane: OpenAI chat streams to tollgate's model with an Anthropic upstream (the other targets relay them to the OpenAI endpoint as they are)")
	publishDir := fs.String("publish", "", "after the run, write the generated section of DIR/benchmarks.md (between its tollgate-bench markers) and the graphs DIR/benchmarks/*.svg; the defaults become every target with the peers, -workloads "+publishWorkloads+", -held 1000,8000 and -rounds 3")
	date := fs.String("date", "", "the run's date in the published page (default: today, UTC)")
	settle := fs.Duration("settle", 30*time.Second, "rest after the workloads, all targets idle, before reading each one's RSS again (after-load RSS); 0 skips it (the default with -quick)")
	gmp := fs.Int("gomaxprocs", 0, "GOMAXPROCS for the Go proxies (reverseproxy, tollgate); 0 keeps Go's default (all cores), 1 matches nginx's single worker")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tollgate-bench [flags]\n\nMeasures latency, throughput, CPU and memory that a proxy adds in front of a fake LLM upstream.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *date != "" {
		if _, err := time.Parse(time.DateOnly, *date); err != nil {
			return config{}, fmt.Errorf("-date %q: want YYYY-MM-DD", *date)
		}
	}
	if *publishDir != "" {
		if !set["targets"] {
			*targets = strings.Join(publishTargets, ",")
		}
		if !set["workloads"] {
			*wls = publishWorkloads
			set["workloads"] = true
		}
		if !set["held"] {
			*held = "1000,8000"
		}
		if !set["rounds"] {
			*rounds = 3
		}
	}

	cfg := config{n: *n, minN: 50, c: *c, d: *d, idleWarm: 10, quick: *quick,
		tollgateBin: *tg, baselineBin: *baseline, jsonPath: *jsonPath, mdPath: *mdPath, keepTmp: *keep, gomaxprocs: *gmp, rounds: *rounds,
		publishDir: *publishDir, date: *date, settle: *settle, args: slices.Clone(args)}
	if cfg.quick && !set["settle"] {
		cfg.settle = 0
	}
	if cfg.quick {
		if !set["n"] {
			cfg.n = 60
		}
		if !set["d"] {
			cfg.d = 250 * time.Millisecond
		}
		cfg.minN = 20
	}
	for _, p := range []*string{&cfg.tollgateBin, &cfg.baselineBin} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return config{}, err
		}
		*p = abs
	}
	if cfg.baselineBin != "" && !set["targets"] {
		*targets += ",tollgate-baseline"
	}
	for _, t := range splitList(*targets) {
		ok := false
		for _, k := range knownTargets {
			ok = ok || k == t
		}
		if !ok {
			return config{}, fmt.Errorf("unknown target %q", t)
		}
		cfg.targets = append(cfg.targets, t)
	}
	for _, s := range splitList(*held) {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			return config{}, fmt.Errorf("-held: %q is not a positive number of streams", s)
		}
		cfg.held.ns = append(cfg.held.ns, n)
	}
	cfg.held.events, cfg.held.gap, cfg.held.translated = *heldEvents, *heldGap, *heldTranslated
	cfg.held.anthropic, cfg.held.body = *heldAnthropic, *heldBody
	if cfg.held.anthropic && cfg.held.translated {
		return config{}, errors.New("-held-anthropic and -held-translated: pick one (the translation lane's held streams are OpenAI chat)")
	}
	if cfg.held.body < 1 {
		return config{}, errors.New("-held-body must be positive")
	}
	if len(cfg.held.ns) > 0 && (cfg.held.events < 1 || cfg.held.gap < 0) {
		return config{}, errors.New("-held-events must be positive and -held-gap not negative")
	}
	if len(cfg.held.ns) > 0 && !set["workloads"] {
		*wls = "" // the scenario alone
	}
	for _, name := range splitList(*wls) {
		w, ok := workloadByName(name)
		if !ok {
			return config{}, fmt.Errorf("unknown workload %q", name)
		}
		cfg.workloads = append(cfg.workloads, w)
	}
	switch {
	case len(cfg.targets) == 0:
		return config{}, errors.New("no targets")
	case len(cfg.workloads) == 0 && len(cfg.held.ns) == 0:
		return config{}, errors.New("no workloads")
	case cfg.n < 1 || cfg.c < 1 || cfg.d <= 0 || cfg.rounds < 1 || cfg.gomaxprocs < 0:
		return config{}, errors.New("-n, -c, -d and -rounds must be positive, -gomaxprocs not negative")
	case cfg.d > 2*time.Minute:
		return config{}, errors.New("-d is capped at 2m to keep the run bounded")
	}
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// target is one endpoint the load is sent to.
type target struct {
	Name    string
	BaseURL string
	proc    *child // the measured process; nil for direct
	gateway bool   // takes tollgate's model names
	peer    bool   // another gateway: measured on peerWorkloads only
	key     string // the API key to send; "" sends tollgate's master key
	client  *http.Client
	sent    atomic.Int64 // requests sent, warm-ups included
}

func (t *target) pid() int {
	if t.proc == nil {
		return 0
	}
	return t.proc.pid()
}

// run starts the upstream and every target, measures every workload on
// every target, and ends all children before returning.
func run(ctx context.Context, cfg config, logw io.Writer) (rep *Report, err error) {
	if runtime.GOOS != "linux" {
		return nil, errors.New("needs Linux (/proc)")
	}
	logf := func(format string, a ...any) { fmt.Fprintf(logw, format+"\n", a...) }
	var limit uint64
	if len(cfg.held.ns) > 0 {
		// Before any child starts: they inherit it.
		if limit, err = raiseOpenFiles(); err != nil {
			return nil, fmt.Errorf("raising the open-file limit: %w", err)
		}
	}
	tmp, err := os.MkdirTemp("", "tollgate-bench-")
	if err != nil {
		return nil, err
	}
	if cfg.keepTmp {
		logf("temp dir kept: %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	procs := &procSet{}
	defer procs.stopAll()

	up, upAddr, err := procs.startSelf(ctx, "upstream", filepath.Join(tmp, "upstream.log"), 0, "upstream", "-listen", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, up, "http://"+upAddr+"/healthz", 10*time.Second); err != nil {
		return nil, err
	}
	logf("fake upstream on %s (pid %d)", upAddr, up.pid())

	rep = newReport(cfg)
	var targets []*target
	infos := map[string]*TargetInfo{}
	for _, name := range cfg.targets {
		var t *target
		var err error
		switch name {
		case "direct":
			t = &target{Name: name, BaseURL: "http://" + upAddr}
		case "reverseproxy":
			var c *child
			var addr string
			c, addr, err = procs.startSelf(ctx, name, filepath.Join(tmp, "reverseproxy.log"), cfg.gomaxprocs,
				"proxy", "-listen", "127.0.0.1:0", "-upstream", "http://"+upAddr)
			if err == nil {
				t = &target{Name: name, BaseURL: "http://" + addr, proc: c}
				err = waitHTTP(ctx, c, t.BaseURL+"/healthz", 10*time.Second)
			}
		case "nginx":
			t, err = startNginx(ctx, procs, tmp, upAddr)
		case "tollgate-baseline":
			if cfg.baselineBin == "" {
				err = errSkipped{"no -baseline binary given"}
			} else {
				t, err = startTollgate(ctx, procs, tmp, name, cfg.baselineBin, upAddr, cfg.gomaxprocs)
			}
		case "tollgate", "tollgate-limited", "tollgate-stateless":
			if cfg.tollgateBin == "" {
				logf("building ./cmd/tollgate ...")
				cfg.tollgateBin, err = buildTollgate(ctx, tmp)
			}
			if err == nil {
				t, err = startTollgate(ctx, procs, tmp, name, cfg.tollgateBin, upAddr, cfg.gomaxprocs)
			}
		default:
			if p, ok := peerByName(name); ok {
				if peersOff != "" {
					err = errSkipped{peersOff}
				} else {
					t, err = startPeer(ctx, procs, tmp, p, upAddr, cfg.gomaxprocs, logf)
				}
			}
		}
		info := &TargetInfo{Name: name}
		if p, ok := peerByName(name); ok {
			info.Version = p.module + "@" + p.version
		}
		rep.Targets = append(rep.Targets, info)
		infos[name] = info
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			info.Skipped = err.Error()
			logf("%s: SKIPPED: %v", name, err)
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s skipped: %s", name, firstLine(err.Error())))
			continue
		}
		t.client = newLoadClient()
		info.PID = t.pid()
		if t.proc != nil {
			if err := waitChat(ctx, t.proc, t, 30*time.Second); err == nil {
				info.ColdStartMS = float64(time.Since(t.proc.started)) / float64(time.Millisecond)
			}
		}
		if t.pid() != 0 {
			logf("%s on %s (pid %d)", name, t.BaseURL, t.pid())
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 {
		return nil, errors.New("no target could be started")
	}
	defer func() {
		for _, t := range targets {
			t.client.CloseIdleConnections()
		}
	}()

	// Idle memory: after start-up and a few small requests, before any load.
	small, _ := workloadByName("small")
	for _, t := range targets {
		if t.proc == nil {
			continue
		}
		s := newReqSpec(t, small)
		runSequential(ctx, t.client, s, 0, cfg.idleWarm)
		if kb, err := readStatusKB(t.pid(), "VmRSS"); err == nil {
			infos[t.Name].IdleRSSKB = kb
		}
	}

	// Rounds take turns workload by workload, so that a slow drift of the
	// machine is shared by the workloads compared with one another.
	rounds := make([][]Result, cfg.rounds)
	for i := range rounds {
		for _, w := range cfg.workloads {
			logf("== %s: %s (round %d of %d)", w.Name, w.Desc, i+1, cfg.rounds)
			res, err := measureWorkload(ctx, cfg, targets, w, up.pid(), logf)
			if err != nil {
				return nil, err
			}
			rounds[i] = append(rounds[i], res...)
		}
	}
	rep.Results = medianRound(rounds)
	rep.Lanes = laneRatios(cfg.workloads, rounds)
	if len(cfg.held.ns) > 0 && len(cfg.workloads) > 0 {
		// The peak under requests alone, before the held streams raise it.
		for _, t := range targets {
			if t.proc != nil && !t.proc.exited() {
				infos[t.Name].LoadPeakRSSKB, _ = readStatusKB(t.pid(), "VmHWM")
			}
		}
	}
	if cfg.settle > 0 && len(cfg.workloads) > 0 {
		// What each process gives back once the load is over: all rest
		// at once, so one wait serves them all.
		logf("== resting %s after the load", cfg.settle)
		for _, t := range targets {
			t.client.CloseIdleConnections()
		}
		select {
		case <-time.After(cfg.settle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		for _, t := range targets {
			if t.proc != nil && !t.proc.exited() {
				infos[t.Name].AfterLoadRSSKB, _ = readStatusKB(t.pid(), "VmRSS")
			}
		}
	}

	if len(cfg.held.ns) > 0 {
		for _, n := range cfg.held.ns {
			for _, t := range targets {
				logf("== held streams: %d through %s (%s), %d events %s apart (open files: %d)", n, t.Name, cfg.held.lane(), cfg.held.events, cfg.held.gap, limit)
				r := runHeld(ctx, t, cfg.held, n)
				logf("  %s: %+v", t.Name, r)
				rep.Held = append(rep.Held, r)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
			}
		}
	}

	for _, t := range targets {
		if t.proc == nil || t.proc.exited() {
			continue
		}
		if kb, err := readStatusKB(t.pid(), "VmHWM"); err == nil {
			infos[t.Name].PeakRSSKB = kb
		}
		infos[t.Name].Requests = t.sent.Load()
		if t.gateway && t.proc.logPath != "" {
			if st, err := os.Stat(t.proc.logPath); err == nil {
				infos[t.Name].LogBytes = st.Size()
			}
		}
	}
	rep.finish()
	return rep, nil
}

// medianRound keeps, for each result, the round whose CPU per request is
// the median of the rounds', with every round's CPU per request when there
// are several.
func medianRound(rounds [][]Result) []Result {
	out := slices.Clone(rounds[0])
	for i := range out {
		var all []Result
		for _, r := range rounds {
			if i < len(r) && r[i].Workload == out[i].Workload && r[i].Target == out[i].Target {
				all = append(all, r[i])
			}
		}
		var cpu []float64
		if len(all) > 1 {
			for _, r := range all {
				cpu = append(cpu, r.CPUPerReqUS)
			}
		}
		slices.SortStableFunc(all, func(a, b Result) int { return cmp.Compare(a.CPUPerReqUS, b.CPUPerReqUS) })
		out[i] = all[len(all)/2]
		out[i].CPURoundsUS = cpu
	}
	return out
}

// latencyRounds is how many slices the concurrency-1 phase is cut into.
// The targets take turns slice by slice, so that a slow drift of the
// machine (other processes, frequency changes) is shared by all of them
// instead of landing on whichever target ran at the wrong moment.
const latencyRounds = 5

// measureWorkload measures one workload on every target: a response check,
// the interleaved concurrency-1 latency phase, then each target's concurrent
// throughput/CPU phase in turn.
func measureWorkload(ctx context.Context, cfg config, targets []*target, w workload, upPID int, logf func(string, ...any)) ([]Result, error) {
	type cell struct {
		t    *target
		spec *reqSpec
		r    Result
		seq  seqResult
	}
	var cells []*cell
	var out []Result
	for _, t := range targets {
		if (w.Translated || w.Bedrock || w.Gemini) && !t.gateway {
			continue // only a gateway can translate, or sign for Bedrock
		}
		if t.peer && !peerWorkloads[w.Name] {
			continue
		}
		c := &cell{t: t, spec: newReqSpec(t, w), r: Result{Workload: w.Name, Target: t.Name, Concurrency: cfg.c}}
		c.r.BodyBytes = len(c.spec.body)
		if t.proc != nil && t.proc.exited() {
			c.r.Error = "process exited: " + firstLine(t.proc.logTail())
		} else if warn, err := verify(ctx, t.client, c.spec, w); err != nil {
			c.r.Error = "bad response: " + err.Error()
		} else {
			c.r.Warning = warn
			cells = append(cells, c)
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		logf("  %-12s ERROR %s", t.Name, c.r.Error)
		out = append(out, c.r)
	}

	n := max(cfg.minN, int(float64(cfg.n)*w.NFactor))
	for _, c := range cells {
		runSequential(ctx, c.t.client, c.spec, max(10, n/20), 0)
	}
	for round := 0; round < latencyRounds; round++ {
		per := n / latencyRounds
		if round < n%latencyRounds {
			per++
		}
		for _, c := range cells {
			s := runSequential(ctx, c.t.client, c.spec, 0, per)
			c.seq.totals = append(c.seq.totals, s.totals...)
			c.seq.ttfbs = append(c.seq.ttfbs, s.ttfbs...)
			c.seq.errors += s.errors
			if c.seq.firstErr == nil {
				c.seq.firstErr = s.firstErr
			}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	for _, c := range cells {
		r := &c.r
		r.N = len(c.seq.totals)
		r.Errors = c.seq.errors
		r.P50US = us(percentile(c.seq.totals, 0.50))
		r.P99US = us(percentile(c.seq.totals, 0.99))
		if w.Stream {
			r.TTFBP50US = us(percentile(c.seq.ttfbs, 0.50))
			r.TTFBP99US = us(percentile(c.seq.ttfbs, 0.99))
		}
		if c.seq.firstErr != nil {
			r.FirstError = c.seq.firstErr.Error()
		}
		measureConcurrent(ctx, cfg, c.t, c.spec, upPID, r)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		logf("  %-12s %s", c.t.Name, r.summary())
		out = append(out, *r)
	}
	// Keep the targets' order in the report.
	slices.SortStableFunc(out, func(a, b Result) int { return targetIndex(targets, a.Target) - targetIndex(targets, b.Target) })
	return out, nil
}

func targetIndex(ts []*target, name string) int {
	for i, t := range ts {
		if t.Name == name {
			return i
		}
	}
	return len(ts)
}

// measureConcurrent runs the fixed-duration phase at concurrency cfg.c and
// samples the CPU time of the target's process and of the upstream around it.
func measureConcurrent(ctx context.Context, cfg config, t *target, spec *reqSpec, upPID int, r *Result) {
	// Open all c connections and warm caches before the measured window.
	runConcurrent(ctx, t.client, spec, cfg.c, min(max(cfg.d/10, 50*time.Millisecond), 500*time.Millisecond))

	var before, upBefore cpuSample
	var cpuErr error
	if t.proc != nil {
		before, cpuErr = readCPU(t.pid())
	}
	upBefore, upErr := readCPU(upPID)
	cr := runConcurrent(ctx, t.client, spec, cfg.c, cfg.d)
	if t.proc != nil && cpuErr == nil {
		var after cpuSample
		if after, cpuErr = readCPU(t.pid()); cpuErr == nil && cr.requests > 0 {
			ns, method := cpuDelta(before, after)
			r.CPUPerReqUS = float64(ns) / 1e3 / float64(cr.requests)
			r.CPUMethod = method
			r.CPUSec = float64(ns) / 1e9
		}
	}
	if cpuErr != nil {
		r.Warning = strings.TrimPrefix(r.Warning+"; cpu: "+cpuErr.Error(), "; ")
	}
	if upErr == nil && cr.requests > 0 {
		if upAfter, err := readCPU(upPID); err == nil {
			ns, _ := cpuDelta(upBefore, upAfter)
			r.UpstreamCPUPerReqUS = float64(ns) / 1e3 / float64(cr.requests)
		}
	}
	r.Requests = cr.requests
	r.ErrorsConc = cr.errors
	r.ElapsedSec = cr.elapsed.Seconds()
	if cr.elapsed > 0 {
		r.RPS = float64(cr.requests) / cr.elapsed.Seconds()
	}
	r.ConcP50US = us(percentile(cr.lat, 0.50))
	r.ConcP99US = us(percentile(cr.lat, 0.99))
	if r.FirstError == "" && cr.firstErr != nil {
		r.FirstError = cr.firstErr.Error()
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
