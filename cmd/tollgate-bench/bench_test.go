package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play the helper processes: run() re-executes
// os.Executable(), which under `go test` is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "upstream":
			os.Exit(runUpstream(os.Args[2:]))
		case "proxy":
			os.Exit(runProxy(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

func TestQuickRunDirectAndReverseProxy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	if testing.Short() {
		t.Skip("a quick benchmark run: go test without -short runs it")
	}
	cfg, err := parseFlags([]string{"-quick", "-targets", "direct,reverseproxy",
		"-workloads", "small,large,stream,stream-anthropic,responses,stream-responses,gemini-client,stream-gemini-client", "-c", "8"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var log bytes.Buffer
	rep, err := run(ctx, cfg, &log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	t.Log("\n" + log.String())

	if len(rep.Results) != 2*8 {
		t.Fatalf("got %d results, want 16", len(rep.Results))
	}
	for _, r := range rep.Results {
		name := r.Workload + "/" + r.Target
		if r.Error != "" {
			t.Errorf("%s: %s", name, r.Error)
			continue
		}
		if r.N == 0 || r.P50US <= 0 || r.P99US < r.P50US {
			t.Errorf("%s: latency phase: n=%d p50=%v p99=%v", name, r.N, r.P50US, r.P99US)
		}
		if r.Requests == 0 || r.RPS <= 0 {
			t.Errorf("%s: concurrent phase: %d requests, %v req/s", name, r.Requests, r.RPS)
		}
		if r.Errors != 0 || r.ErrorsConc != 0 {
			t.Errorf("%s: %d+%d errors: %s", name, r.Errors, r.ErrorsConc, r.FirstError)
		}
		if r.UpstreamCPUPerReqUS <= 0 {
			t.Errorf("%s: upstream CPU/req = %v", name, r.UpstreamCPUPerReqUS)
		}
		if strings.HasPrefix(r.Workload, "stream") && (r.TTFBP50US <= 0 || r.TTFBP50US > r.P50US*4) {
			t.Errorf("%s: ttfb p50 %v vs total p50 %v", name, r.TTFBP50US, r.P50US)
		}
		switch r.Target {
		case "direct":
			if r.CPUPerReqUS != 0 || r.AddedP50US != nil {
				t.Errorf("%s: direct has proxy figures", name)
			}
		case "reverseproxy":
			if r.CPUPerReqUS <= 0 || r.CPUMethod == "" {
				t.Errorf("%s: proxy CPU/req = %v (%s)", name, r.CPUPerReqUS, r.CPUMethod)
			}
			if r.AddedP50US == nil {
				t.Errorf("%s: no added latency", name)
			}
		}
	}
	for _, ti := range rep.Targets {
		if ti.Name == "reverseproxy" && (ti.IdleRSSKB <= 0 || ti.PeakRSSKB < ti.IdleRSSKB) {
			t.Errorf("reverseproxy RSS idle=%d peak=%d", ti.IdleRSSKB, ti.PeakRSSKB)
		}
	}

	// The helper processes must be gone once run returns.
	for _, ti := range rep.Targets {
		if ti.PID != 0 {
			if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(ti.PID))); err == nil {
				if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(ti.PID), "stat")); !bytes.Contains(b, []byte(") Z")) {
					t.Errorf("%s (pid %d) still running after run()", ti.Name, ti.PID)
				}
			}
		}
	}

	// All three output forms render.
	var text bytes.Buffer
	writeText(&text, rep)
	if !strings.Contains(text.String(), "reverseproxy") || !strings.Contains(text.String(), "proxy CPU/req") {
		t.Errorf("text report lacks rows:\n%s", text.String())
	}
	dir := t.TempDir()
	if err := writeJSONFile(filepath.Join(dir, "r.json"), rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	b, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Results) != len(rep.Results) {
		t.Errorf("JSON round trip: %v", err)
	}
	if err := writeMarkdownFile(filepath.Join(dir, "r.md"), rep); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "r.md"))
	if !bytes.Contains(md, []byte("| reverseproxy |")) {
		t.Errorf("markdown lacks rows:\n%s", md)
	}
}

// TestQuickRunTollgate runs the gateway's own targets as an operator
// would set them up (database, migration, a virtual key made with the
// CLI): each answers every request without error.
func TestQuickRunTollgate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	if testing.Short() {
		t.Skip("builds the gateway and benchmarks it: go test without -short runs it")
	}
	rep, log := quickRun(t, "-quick", "-targets", "tollgate,tollgate-limited,tollgate-stateless", "-workloads",
		"small,stream,bedrock,stream-bedrock,gemini,stream-gemini,stream-responses-gemini", "-c", "4")
	if len(rep.Results) != 3*7 {
		t.Fatalf("got %d results, want 21:\n%s", len(rep.Results), log.String())
	}
	for _, r := range rep.Results {
		if r.Error != "" || r.Errors != 0 || r.ErrorsConc != 0 || r.Requests == 0 || r.CPUPerReqUS <= 0 {
			t.Errorf("%s/%s: error %q, %d+%d errors (%s), %d requests, CPU/req %v", r.Workload, r.Target, r.Error,
				r.Errors, r.ErrorsConc, r.FirstError, r.Requests, r.CPUPerReqUS)
		}
	}
}

// TestQuickRunTollgateGeminiClients runs Gemini API clients through the
// gateway, on both lanes, next to the chat pass-through lane they are
// measured by, for two rounds: every request is answered, and the lane
// ratios are reported.
func TestQuickRunTollgateGeminiClients(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	if testing.Short() {
		t.Skip("builds the gateway and benchmarks it: go test without -short runs it")
	}
	rep, log := quickRun(t, "-quick", "-targets", "tollgate", "-rounds", "2", "-workloads",
		"small,stream,gemini-client,stream-gemini-client,gemini-client-translated,stream-gemini-client-translated", "-c", "4")
	if len(rep.Results) != 6 {
		t.Fatalf("got %d results, want 6:\n%s", len(rep.Results), log.String())
	}
	for _, r := range rep.Results {
		if r.Error != "" || r.Errors != 0 || r.ErrorsConc != 0 || r.Requests == 0 || r.CPUPerReqUS <= 0 || len(r.CPURoundsUS) != 2 {
			t.Errorf("%s/%s: error %q, %d+%d errors (%s), %d requests, CPU/req %v %v", r.Workload, r.Target, r.Error,
				r.Errors, r.ErrorsConc, r.FirstError, r.Requests, r.CPUPerReqUS, r.CPURoundsUS)
		}
	}
	var got []string
	for _, lr := range rep.Lanes {
		got = append(got, lr.Workload+"/"+lr.Versus)
		if len(lr.Rounds) != 2 || lr.Median <= 0 {
			t.Errorf("%+v", lr)
		}
	}
	want := []string{"gemini-client/small", "stream-gemini-client/stream", "gemini-client-translated/gemini-client",
		"stream-gemini-client-translated/stream-gemini-client"}
	if !slices.Equal(got, want) {
		t.Errorf("lane ratios %v, want %v", got, want)
	}
}

// quickRun runs the benchmark with args, within three minutes, and
// returns its report and log.
func quickRun(t *testing.T, args ...string) (*Report, *bytes.Buffer) {
	t.Helper()
	cfg, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rep, err := run(ctx, cfg, &log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	return rep, &log
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i))
	}
	if got := percentile(ds, 0.5); got != 50 {
		t.Errorf("p50 = %v, want 50", got)
	}
	if got := percentile(ds, 0.99); got != 99 {
		t.Errorf("p99 = %v, want 99", got)
	}
	if got := percentile(ds[:1], 0.99); got != 1 {
		t.Errorf("p99 of one = %v", got)
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("p50 of none = %v", got)
	}
}

func TestJSONTrueField(t *testing.T) {
	cases := map[string]bool{
		`{"stream":true}`:   true,
		`{"stream" : true}`: true,
		`{"stream":false}`:  false,
		`{"messages":[{"content":"\"stream\":true"}]}`: false,
		`{"x":{"stream":1},"stream":true}`:             true,
		`{}`:                                           false,
	}
	for in, want := range cases {
		if got := jsonTrueField([]byte(in), "stream"); got != want {
			t.Errorf("%s: got %v", in, got)
		}
	}
}

func TestWorkloadBodies(t *testing.T) {
	for _, w := range allWorkloads {
		b := w.body("gpt-bench")
		if !json.Valid(b) {
			t.Errorf("%s: invalid JSON", w.Name)
		}
		if d := len(b) - w.BodySize; d < -64 || d > 64 {
			t.Errorf("%s: body %d bytes, want about %d", w.Name, len(b), w.BodySize)
		}
		stream := jsonTrueField(b, "stream")
		if w.API == apiGemini {
			// The Gemini API streams by its URL, and names no model in its body.
			stream = strings.HasSuffix(w.path("m"), ":streamGenerateContent?alt=sse")
			if bytes.Contains(b, []byte(`"model"`)) || bytes.Contains(b, []byte(`"stream"`)) {
				t.Errorf("%s: a Gemini body with a model or stream member: %s", w.Name, b)
			}
		}
		if stream != w.Stream {
			t.Errorf("%s: stream flag mismatch", w.Name)
		}
	}
}

func TestCPUDelta(t *testing.T) {
	// Threads all alive: schedstat is used.
	if ns, m := cpuDelta(cpuSample{schedNS: 1e9, statNS: 1e9}, cpuSample{schedNS: 1.5e9, statNS: 1.5e9}); m != "schedstat" || ns != 5e8 {
		t.Errorf("got %d %s", ns, m)
	}
	// A thread exited and took its run time with it: stat is used.
	if ns, m := cpuDelta(cpuSample{schedNS: 1e9, statNS: 1e9}, cpuSample{schedNS: 1.1e9, statNS: 1.5e9}); m != "stat" || ns != 5e8 {
		t.Errorf("got %d %s", ns, m)
	}
}

// -baseline adds the tollgate-baseline target, which is not run otherwise.
func TestBaselineFlag(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil || slices.Contains(cfg.targets, "tollgate-baseline") {
		t.Fatalf("default targets %v (%v)", cfg.targets, err)
	}
	cfg, err = parseFlags([]string{"-baseline", "old/tollgate"})
	if err != nil || !slices.Contains(cfg.targets, "tollgate-baseline") || !filepath.IsAbs(cfg.baselineBin) ||
		!strings.HasSuffix(cfg.baselineBin, "old/tollgate") {
		t.Fatalf("with -baseline: targets %v, binary %q (%v)", cfg.targets, cfg.baselineBin, err)
	}
	cfg, err = parseFlags([]string{"-baseline", "old/tollgate", "-targets", "tollgate"})
	if err != nil || slices.Contains(cfg.targets, "tollgate-baseline") {
		t.Fatalf("-targets chosen: %v (%v)", cfg.targets, err)
	}
}

func TestMedianRound(t *testing.T) {
	r := func(w string, cpu float64) Result { return Result{Workload: w, Target: "tollgate", CPUPerReqUS: cpu} }
	got := medianRound([][]Result{
		{r("a", 30), r("b", 5)},
		{r("a", 10), r("b", 7)},
		{r("a", 20), r("b", 6)},
	})
	if len(got) != 2 || got[0].CPUPerReqUS != 20 || got[1].CPUPerReqUS != 6 {
		t.Fatalf("medianRound = %+v, want a: 20, b: 6", got)
	}
	if !slices.Equal(got[0].CPURoundsUS, []float64{30, 10, 20}) {
		t.Errorf("a's rounds %v, want 30 10 20 in the order they ran", got[0].CPURoundsUS)
	}
	if one := medianRound([][]Result{{r("a", 3)}}); one[0].CPURoundsUS != nil {
		t.Errorf("one round reports rounds %v", one[0].CPURoundsUS)
	}
}

// TestQuickHeldStreams holds a few slow streams through the gateway and
// directly: every stream gets all its events, and the gateway's memory
// and CPU are read.
func TestQuickHeldStreams(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	if testing.Short() {
		t.Skip("builds the gateway and benchmarks it: go test without -short runs it")
	}
	for _, lane := range []string{"passthrough", "translated", "passthrough, anthropic"} {
		t.Run(lane, func(t *testing.T) { quickHeld(t, lane) })
	}
}

func quickHeld(t *testing.T, lane string) {
	cfg, err := parseFlags([]string{"-targets", "direct,tollgate", "-held", "5,20", "-held-events", "3", "-held-gap", "50ms", "-held-body", "20000",
		"-held-translated=" + strconv.FormatBool(lane == "translated"), "-held-anthropic=" + strconv.FormatBool(lane == "passthrough, anthropic")})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.workloads) != 0 {
		t.Fatalf("-held alone runs workloads %v", cfg.workloads)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rep, err := run(ctx, cfg, &log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if len(rep.Held) != 4 {
		t.Fatalf("got %d held results, want 4:\n%s", len(rep.Held), log.String())
	}
	for _, r := range rep.Held {
		gateway := r.Target == "tollgate"
		if r.Errors != 0 || r.TTFTp50MS <= 0 || gateway && (r.OpenRSSKB <= 0 || r.CPUPerEventUS <= 0) || r.Lane != lane {
			t.Errorf("%+v", r)
		}
	}
	var out bytes.Buffer
	writeText(&out, rep)
	if !strings.Contains(out.String(), "held streams") {
		t.Errorf("no held-streams table:\n%s", out.String())
	}
}

func TestHeldShape(t *testing.T) {
	for body, want := range map[string][2]int{
		`{"user":"held:20:1000"}`: {20, 1000},
		`{"user":"held:3:0"}`:     {3, 0},
		`{"user":"held:0:10"}`:    {-1, 0},
		`{"user":"held:x"}`:       {-1, 0},
		`{"user":"bench"}`:        {-1, 0},
	} {
		n, gap, ok := heldShape([]byte(body))
		if want[0] < 0 {
			if ok {
				t.Errorf("%s: read as %d, %v", body, n, gap)
			}
			continue
		}
		if !ok || n != want[0] || gap != time.Duration(want[1])*time.Millisecond {
			t.Errorf("%s: %d, %v, %v", body, n, gap, ok)
		}
	}
}
