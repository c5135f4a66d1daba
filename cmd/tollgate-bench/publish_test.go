package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

func TestCLIProxyAPIConfig(t *testing.T) {
	var c struct {
		Host       string   `yaml:"host"`
		Port       int      `yaml:"port"`
		AuthDir    string   `yaml:"auth-dir"`
		APIKeys    []string `yaml:"api-keys"`
		Usage      bool     `yaml:"usage-statistics-enabled"`
		RequestLog *bool    `yaml:"request-log"`
		Retry      *int     `yaml:"request-retry"`
		NoCloak    bool     `yaml:"disable-claude-cloak-mode"`
		Management struct {
			AllowRemote bool `yaml:"allow-remote"`
		} `yaml:"remote-management"`
		OpenAI []struct {
			Name    string `yaml:"name"`
			BaseURL string `yaml:"base-url"`
			Keys    []struct {
				APIKey string `yaml:"api-key"`
			} `yaml:"api-key-entries"`
			Models []struct{ Name, Alias string } `yaml:"models"`
		} `yaml:"openai-compatibility"`
		Claude []struct {
			APIKey  string                         `yaml:"api-key"`
			BaseURL string                         `yaml:"base-url"`
			Models  []struct{ Name, Alias string } `yaml:"models"`
		} `yaml:"claude-api-key"`
	}
	src := cliproxyapiConfig(43210, "127.0.0.1:5555", "/tmp/x")
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"listens on loopback", c.Host == "127.0.0.1" && c.Port == 43210},
		{"auth dir in the run's dir", c.AuthDir == "/tmp/x/auth"},
		{"one client key, the benchmark's", len(c.APIKeys) == 1 && c.APIKeys[0] == tollgateMasterKey},
		{"usage statistics on", c.Usage},
		{"request bodies not dumped to files", c.RequestLog != nil && !*c.RequestLog},
		{"no retries", c.Retry != nil && *c.Retry == 0},
		{"no cloaking of Claude requests", c.NoCloak},
		{"no remote management", !c.Management.AllowRemote},
		{"OpenAI upstream", len(c.OpenAI) == 1 && c.OpenAI[0].BaseURL == "http://127.0.0.1:5555/v1" && len(c.OpenAI[0].Keys) == 1},
		{"bench-o alias", len(c.OpenAI) == 1 && len(c.OpenAI[0].Models) == 1 &&
			c.OpenAI[0].Models[0].Name == upstreamModelOpenAI && c.OpenAI[0].Models[0].Alias == tollgateModelOpenAI},
		{"Anthropic upstream", len(c.Claude) == 1 && c.Claude[0].BaseURL == "http://127.0.0.1:5555" && c.Claude[0].APIKey != ""},
		{"bench-a alias", len(c.Claude) == 1 && len(c.Claude[0].Models) == 1 &&
			c.Claude[0].Models[0].Name == upstreamModelAnthr && c.Claude[0].Models[0].Alias == tollgateModelAnthr},
	}
	for _, ck := range checks {
		if !ck.ok {
			t.Errorf("%s:\n%s", ck.name, src)
		}
	}
}

func TestPeerSpecs(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range peers {
		if seen[p.name] {
			t.Errorf("%s twice", p.name)
		}
		seen[p.name] = true
		if p.module == "" || !strings.HasPrefix(p.version, "v") || p.pkg == "" || p.binName == "" {
			t.Errorf("%s: incomplete: %+v", p.name, p)
		}
		if _, ok := peerByName(p.name); !ok {
			t.Errorf("%s: not found by name", p.name)
		}
	}
	for _, w := range []string{"small", "large", "stream", "small-translated", "stream-translated"} {
		if !peerWorkloads[w] {
			t.Errorf("peers are not measured on %s", w)
		}
	}
}

func TestGoReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"github.com/a/b@v1.0.0: reading https://proxy.example/github.com/a/b/@v/v1.0.0.info: 403 Forbidden\n\tserver response: This module version is not available.",
			"github.com/a/b@v1.0.0: the module proxy answered 403 Forbidden (This module version is not available.)"},
		{"github.com/a/b@v1.0.0: reading https://proxy.example/x: 404 Not Found", "github.com/a/b@v1.0.0: the module proxy answered 404 Not Found"},
		{"plain error", "plain error"},
	}
	for _, tt := range tests {
		if got := goReason(tt.in); got != tt.want {
			t.Errorf("goReason(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "go run ./cmd/tollgate-bench"},
		{[]string{"-publish", "docs"}, "go run ./cmd/tollgate-bench -publish docs"},
		{[]string{"-date", "a b", "-x", "it's"}, `go run ./cmd/tollgate-bench -date 'a b' -x 'it'\''s'`},
		{[]string{"-publish", "docs", "-json", "/tmp/r.json", "--md=/tmp/r.md", "-keep", "-rounds", "3"}, "go run ./cmd/tollgate-bench -publish docs -rounds 3"},
	}
	for _, tt := range tests {
		if got := commandLine(tt.args); got != tt.want {
			t.Errorf("commandLine(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestSpliceGenerated(t *testing.T) {
	block := markBegin + "\nGEN\n" + markEnd
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", "# Benchmarks\n\n" + block + "\n"},
		{"after the title and intro", "# B\n\nIntro line one.\nline two.\n\n## Reproduce\n\ntext\n",
			"# B\n\nIntro line one.\nline two.\n\n" + block + "\n\n## Reproduce\n\ntext\n"},
		{"intro up to a heading", "# B\nIntro.\n## Next\n", "# B\nIntro.\n\n" + block + "\n\n## Next\n"},
		{"title alone", "# B\n", "# B\n\n" + block + "\n"},
		{"no title", "text\n", block + "\n\ntext\n"},
		{"markers replaced, the rest kept", "# B\n\nIntro.\n\n" + markBegin + "\nOLD\nOLD\n" + markEnd + "\n\n## After\n",
			"# B\n\nIntro.\n\n" + block + "\n\n## After\n"},
		{"markers anywhere", "before\n" + markBegin + markEnd + "after\n", "before\n" + block + "after\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spliceGenerated(tt.doc, "GEN\n")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			again, err := spliceGenerated(got, "GEN\n")
			if err != nil || again != got {
				t.Errorf("a second splice changed the page (%v):\n%q", err, again)
			}
		})
	}
	for _, doc := range []string{"# B\n" + markBegin + "\n", "# B\n" + markEnd + "\n" + markBegin + "\n"} {
		if _, err := spliceGenerated(doc, "GEN"); err == nil {
			t.Errorf("%q: no error for a broken pair of markers", doc)
		}
	}
}

func TestBarChartSVG(t *testing.T) {
	c := barChart{Title: "Proxy CPU per request: small <1 KB>", Unit: "µs", Note: "c=32 & more", Bars: []bar{
		{"nginx", 61.2}, {"reverseproxy", 151.49}, {"tollgate", 160}, {"cliproxyapi", 1234.5}, {"noise", -3.5}, {"zero", 0},
	}}
	got := c.SVG()
	if !bytes.Equal(got, c.SVG()) {
		t.Fatal("two renderings differ")
	}
	golden(t, "barchart.golden.svg", got)
}

// testReport is a small run's report with fixed figures.
func testReport() *Report {
	f := func(v float64) *float64 { return &v }
	r := &Report{
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), GoVersion: "go1.26.8", NumCPU: 2,
		Settings:  Settings{N: 2000, Concurrency: 32, DurationSec: 5, Rounds: 3, SettleSec: 30},
		Workloads: []WorkloadDoc{{"small", "OpenAI chat, ~1 KB body"}, {"small-translated", "to an Anthropic upstream"}},
		Targets: []*TargetInfo{
			{Name: "direct"},
			{Name: "nginx", PID: 10, IdleRSSKB: 8000, PeakRSSKB: 9000, ColdStartMS: 12},
			{Name: "tollgate", PID: 11, IdleRSSKB: 10000, PeakRSSKB: 30000, LoadPeakRSSKB: 20000, AfterLoadRSSKB: 12000, ColdStartMS: 45},
			{Name: "cliproxyapi", PID: 12, IdleRSSKB: 20000, PeakRSSKB: 60000, ColdStartMS: 300, Version: "github.com/router-for-me/CLIProxyAPI/v7@v7.2.140"},
			{Name: "bifrost", Skipped: "could not be built: refused | by the proxy\nsecond line", Version: "github.com/maximhq/bifrost/transports@v1.5.3"},
		},
		Results: []Result{
			{Workload: "small", Target: "direct", P50US: 100, P99US: 200, ConcP50US: 1000, ConcP99US: 3000, RPS: 20000},
			{Workload: "small", Target: "nginx", P50US: 150, P99US: 300, AddedP50US: f(50), AddedP99US: f(100), ConcP50US: 1500, ConcP99US: 4000, AddedConcP50US: f(500), AddedConcP99US: f(1000), RPS: 15000, CPUPerReqUS: 40},
			{Workload: "small", Target: "tollgate", P50US: 400, P99US: 900, AddedP50US: f(300), AddedP99US: f(700), ConcP50US: 2500, ConcP99US: 6000, AddedConcP50US: f(1500), AddedConcP99US: f(3000), RPS: 9000, CPUPerReqUS: 120},
			{Workload: "small", Target: "cliproxyapi", P50US: 900, P99US: 2000, AddedP50US: f(800), AddedP99US: f(1800), ConcP50US: 6000, ConcP99US: 15000, AddedConcP50US: f(5000), AddedConcP99US: f(12000), RPS: 4000, CPUPerReqUS: 480},
			{Workload: "small-translated", Target: "tollgate", P50US: 450, P99US: 950, AddedP50US: f(350), AddedP99US: f(750), AddedConcP50US: f(1700), AddedConcP99US: f(3500), RPS: 8000, CPUPerReqUS: 160},
			{Workload: "small-translated", Target: "cliproxyapi", Error: "bad response"},
		},
		Held: []HeldResult{
			{Target: "direct", Lane: "passthrough", Streams: 1000},
			{Target: "nginx", Lane: "passthrough", Streams: 1000, IdleRSSKB: 8000, OpenRSSKB: 12000, KBPerOpen: 4},
			{Target: "tollgate", Lane: "passthrough", Streams: 1000, IdleRSSKB: 10000, OpenRSSKB: 40000, KBPerOpen: 30},
			{Target: "cliproxyapi", Lane: "passthrough", Streams: 1000, IdleRSSKB: 20000, OpenRSSKB: 90000, KBPerOpen: 70, Errors: 3},
		},
	}
	return r
}

func TestRenderPublished(t *testing.T) {
	r := testReport()
	meta := publishMeta{Date: "2026-01-02", Command: "go run ./cmd/tollgate-bench -publish docs", Machine: "Test CPU, 2 CPUs, 24 GiB, Linux 6.1",
		Versions: []string{"go1.26.8", "nginx/1.22.1", "tollgate v1.0.0"}}
	charts := publishCharts(r)
	var files []string
	for _, c := range charts {
		files = append(files, c.file)
	}
	want := []string{"cpu-small.svg", "cpu-small-translated.svg", "latency-c1-small.svg", "latency-c32-small.svg",
		"memory-per-stream-1000.svg", "memory-peak.svg", "cold-start.svg"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("charts %v, want %v", files, want)
	}
	golden(t, "published.golden.md", []byte(renderPublished(r, meta, charts)))
}

// TestPublishWritesPageAndGraphs publishes a report twice into a page
// with text of its own: the text stays, the section is the same.
func TestPublishWritesPageAndGraphs(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "benchmarks.md")
	const own = "# Benchmarks\n\nIntro.\n\n## Reproduce\n\nHand-written.\n"
	if err := os.WriteFile(page, []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := publishMeta{Date: "2026-01-02", Command: "go run ./cmd/tollgate-bench -publish docs", Machine: "m"}
	if err := os.MkdirAll(filepath.Join(dir, "benchmarks"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A graph of an earlier run at another concurrency, and a file of
	// the page's own.
	for _, f := range []string{"latency-c8-small.svg", "diagram.svg"} {
		if err := os.WriteFile(filepath.Join(dir, "benchmarks", f), []byte("<svg/>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var first []byte
	for i := range 2 {
		if err := publish(dir, testReport(), meta); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Errorf("a second publish changed the page")
		}
	}
	s := string(first)
	if !strings.HasPrefix(s, "# Benchmarks\n\nIntro.\n\n"+markBegin) || !strings.HasSuffix(s, markEnd+"\n\n## Reproduce\n\nHand-written.\n") {
		t.Errorf("the page's own text moved:\n%s", s)
	}
	for _, f := range []string{"cpu-small.svg", "memory-peak.svg", "cold-start.svg", "diagram.svg"} {
		if _, err := os.Stat(filepath.Join(dir, "benchmarks", f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "benchmarks", "latency-c8-small.svg")); err == nil {
		t.Error("an earlier run's graph was left behind")
	}
}

func TestDateFlag(t *testing.T) {
	for _, tt := range []struct {
		date string
		ok   bool
	}{{"2026-11-27", true}, {"", true}, {"27/11/2026", false}, {"2026-13-01", false}} {
		_, err := parseFlags([]string{"-date", tt.date})
		if (err == nil) != tt.ok {
			t.Errorf("-date %q: error %v, want ok=%v", tt.date, err, tt.ok)
		}
	}
}

// TestPeersOff: with peers off, a peer target is reported skipped, with
// the reason, and the run goes on.
func TestPeersOff(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	defer func(s string) { peersOff = s }(peersOff)
	peersOff = "peers are not built in short tests"
	rep, log := quickRun(t, "-quick", "-targets", "direct,cliproxyapi", "-workloads", "small", "-c", "2")
	if len(rep.Targets) != 2 || rep.Targets[1].Skipped != peersOff || rep.Targets[1].Version == "" {
		t.Errorf("targets %+v\n%s", rep.Targets[1], log)
	}
	if len(rep.Results) != 1 || rep.Results[0].Target != "direct" {
		t.Errorf("results %+v", rep.Results)
	}
}

// TestQuickPublish runs the publish path end to end on the reference
// targets and tollgate (not in short mode: it builds the gateway), with a
// few held streams, into a temporary docs directory.
func TestQuickPublish(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	targets, gateway := "direct,reverseproxy,tollgate", "tollgate"
	if testing.Short() {
		targets, gateway = "direct,reverseproxy", "reverseproxy"
	}
	dir := t.TempDir()
	args := []string{"-quick", "-publish", dir, "-date", "2026-01-02", "-targets", targets,
		"-workloads", "small,stream,small-translated", "-held", "20", "-held-events", "2", "-held-gap", "50ms", "-rounds", "1", "-c", "4"}
	cfg, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	rep, log := quickRun(t, args...)
	if err := publish(dir, rep, collectMeta(t.Context(), cfg, rep)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{markBegin, markEnd, "run of 2026-01-02", "-publish " + dir, "| " + gateway + " |", "per open stream, 20",
		"### Added latency p50 / p99 at c=4", "cold start"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q:\n%s\n%s", want, s, log)
		}
	}
	for _, ti := range rep.Targets {
		if ti.Name != "direct" && ti.ColdStartMS <= 0 {
			t.Errorf("%s: no cold start", ti.Name)
		}
	}
	files := []string{"cpu-small.svg", "latency-c4-small.svg", "memory-per-stream-20.svg", "cold-start.svg"}
	if !testing.Short() {
		files = append(files, "cpu-small-translated.svg")
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, "benchmarks", f)); err != nil {
			t.Error(err)
		}
	}
}
