package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one run measured; it is also the -json schema.
// Times are in microseconds, memory in KiB.
type Report struct {
	Started   time.Time     `json:"started"`
	GoVersion string        `json:"go_version"`
	NumCPU    int           `json:"num_cpu"`
	Settings  Settings      `json:"settings"`
	Targets   []*TargetInfo `json:"targets"`
	Workloads []WorkloadDoc `json:"workloads"`
	Results   []Result      `json:"results"`
	Ratios    []Ratio       `json:"ratios"`
	Lanes     []LaneRatio   `json:"lane_ratios,omitempty"`
	Held      []HeldResult  `json:"held_streams,omitempty"`
	Notes     []string      `json:"notes,omitempty"`
	CPUMethod string        `json:"cpu_method"`
}

type Settings struct {
	N           int     `json:"n"`
	Concurrency int     `json:"concurrency"`
	DurationSec float64 `json:"duration_sec"`
	Quick       bool    `json:"quick"`
	Rounds      int     `json:"rounds"`
	GOMAXPROCS  int     `json:"proxy_gomaxprocs,omitempty"`
	SettleSec   float64 `json:"settle_sec,omitempty"`
}

type WorkloadDoc struct {
	Name string `json:"name"`
	Desc string `json:"desc"`
}

type TargetInfo struct {
	Name      string `json:"name"`
	PID       int    `json:"pid,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
	IdleRSSKB int64  `json:"idle_rss_kib,omitempty"`
	PeakRSSKB int64  `json:"peak_rss_kib,omitempty"`
	// LoadPeakRSSKB is the peak after the workloads, before the held
	// streams, when the run had both.
	LoadPeakRSSKB int64 `json:"load_peak_rss_kib,omitempty"`
	// AfterLoadRSSKB is VmRSS once the workloads are over and every
	// target has rested for -settle.
	AfterLoadRSSKB int64 `json:"after_load_rss_kib,omitempty"`
	Requests       int64 `json:"requests_sent,omitempty"`
	LogBytes       int64 `json:"log_bytes,omitempty"`
	// Version is a peer's module and pinned release.
	Version string `json:"version,omitempty"`
	// ColdStartMS is from exec to the first chat request answered 200
	// (polled every 10ms; tollgate's migrate and key creation before it
	// are not counted).
	ColdStartMS float64 `json:"cold_start_ms,omitempty"`
}

// logPerReq is the size of the gateway's log divided by requests sent.
func (t *TargetInfo) logPerReq() string {
	if t.LogBytes == 0 || t.Requests == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f B", float64(t.LogBytes)/float64(t.Requests))
}

// coldStart prints the cold start, or "-" when it was not measured.
func (t *TargetInfo) coldStart() string {
	if t.ColdStartMS <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", t.ColdStartMS)
}

// Result is one target × workload cell.
type Result struct {
	Workload  string `json:"workload"`
	Target    string `json:"target"`
	BodyBytes int    `json:"request_body_bytes"`
	Error     string `json:"error,omitempty"`
	Warning   string `json:"warning,omitempty"`

	// Concurrency 1.
	N          int      `json:"n"`
	Errors     int      `json:"errors"`
	P50US      float64  `json:"p50_us"`
	P99US      float64  `json:"p99_us"`
	AddedP50US *float64 `json:"added_p50_us"`
	AddedP99US *float64 `json:"added_p99_us"`
	TTFBP50US  float64  `json:"ttfb_p50_us,omitempty"`
	TTFBP99US  float64  `json:"ttfb_p99_us,omitempty"`

	// Concurrency c, fixed duration.
	Concurrency int     `json:"concurrency"`
	Requests    int64   `json:"requests"`
	ErrorsConc  int64   `json:"errors_concurrent"`
	ElapsedSec  float64 `json:"elapsed_sec"`
	RPS         float64 `json:"rps"`
	ConcP50US   float64 `json:"concurrent_p50_us"`
	ConcP99US   float64 `json:"concurrent_p99_us"`
	// AddedConcP50US and AddedConcP99US subtract direct's latency at the
	// same concurrency.
	AddedConcP50US *float64 `json:"added_concurrent_p50_us,omitempty"`
	AddedConcP99US *float64 `json:"added_concurrent_p99_us,omitempty"`
	CPUSec         float64  `json:"proxy_cpu_sec,omitempty"`
	CPUPerReqUS    float64  `json:"proxy_cpu_per_req_us,omitempty"`
	CPUMethod      string   `json:"proxy_cpu_method,omitempty"`
	// CPURoundsUS is CPU/req in every round, in the order they ran, when
	// there were several; the result is the median one's.
	CPURoundsUS         []float64 `json:"proxy_cpu_per_req_rounds_us,omitempty"`
	UpstreamCPUPerReqUS float64   `json:"upstream_cpu_per_req_us"`
	FirstError          string    `json:"first_error,omitempty"`
}

// Ratio compares tollgate with a baseline on one workload.
type Ratio struct {
	Workload string   `json:"workload"`
	Name     string   `json:"name"`
	Value    *float64 `json:"value"`
	Note     string   `json:"note,omitempty"`
}

func newReport(cfg config) *Report {
	r := &Report{
		Started:   time.Now().UTC(),
		GoVersion: runtime.Version(),
		NumCPU:    runtime.NumCPU(),
		Settings:  Settings{N: cfg.n, Concurrency: cfg.c, DurationSec: cfg.d.Seconds(), Quick: cfg.quick, Rounds: cfg.rounds, GOMAXPROCS: cfg.gomaxprocs, SettleSec: cfg.settle.Seconds()},
		CPUMethod: "sum of /proc/PID/task/*/schedstat run time (ns), falling back to /proc/PID/stat utime+stime " +
			"when threads exited during the window; divided by requests completed in the concurrent phase",
	}
	for _, w := range cfg.workloads {
		r.Workloads = append(r.Workloads, WorkloadDoc{w.Name, w.Desc})
	}
	return r
}

func (r *Report) result(workload, target string) *Result {
	for i := range r.Results {
		if r.Results[i].Workload == workload && r.Results[i].Target == target && r.Results[i].Error == "" {
			return &r.Results[i]
		}
	}
	return nil
}

// finish fills in the added latencies (against direct) and the ratios.
func (r *Report) finish() {
	for i := range r.Results {
		res := &r.Results[i]
		d := r.result(res.Workload, "direct")
		if w, ok := workloadByName(res.Workload); ok && d == nil && w.Translated && w.Versus != "" {
			// Only a gateway translates: the floor is direct's on the
			// same client protocol.
			d = r.result(w.Versus, "direct")
		}
		if res.Error != "" || d == nil || res.Target == "direct" {
			continue
		}
		a50, a99 := res.P50US-d.P50US, res.P99US-d.P99US
		res.AddedP50US, res.AddedP99US = &a50, &a99
		c50, c99 := res.ConcP50US-d.ConcP50US, res.ConcP99US-d.ConcP99US
		res.AddedConcP50US, res.AddedConcP99US = &c50, &c99
	}
	for _, w := range r.Workloads {
		tg := r.result(w.Name, "tollgate")
		if tg == nil {
			continue
		}
		for _, base := range []string{"nginx", "reverseproxy", "tollgate-stateless", "tollgate-baseline"} {
			b := r.result(w.Name, base)
			if b == nil {
				continue
			}
			r.Ratios = append(r.Ratios,
				ratio(w.Name, "CPU/req tollgate ÷ "+base, tg.CPUPerReqUS, b.CPUPerReqUS),
				addedRatio(w.Name, "added p50 tollgate ÷ "+base, deref(tg.AddedP50US), deref(b.AddedP50US)),
				ratio(w.Name, "req/s tollgate ÷ "+base, tg.RPS, b.RPS),
			)
		}
	}
	r.limitedRatios()
}

// limitedRatios compares the limited key with the unlimited one.
func (r *Report) limitedRatios() {
	for _, w := range r.Workloads {
		lim, tg := r.result(w.Name, "tollgate-limited"), r.result(w.Name, "tollgate")
		if lim == nil || tg == nil {
			continue
		}
		r.Ratios = append(r.Ratios,
			ratio(w.Name, "CPU/req tollgate-limited ÷ tollgate", lim.CPUPerReqUS, tg.CPUPerReqUS),
			addedRatio(w.Name, "added p50 tollgate-limited ÷ tollgate", deref(lim.AddedP50US), deref(tg.AddedP50US)),
		)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// noisyAddedUS is the added latency below which a ratio over it says more
// about the machine's jitter than about the proxies.
const noisyAddedUS = 30

func addedRatio(workload, name string, num, den float64) Ratio {
	r := ratio(workload, name, num, den)
	if r.Value != nil && den < noisyAddedUS {
		r.Note = fmt.Sprintf("baseline adds < %dµs: within noise", noisyAddedUS)
	}
	return r
}

func ratio(workload, name string, num, den float64) Ratio {
	r := Ratio{Workload: workload, Name: name}
	if den <= 0 {
		r.Note = "n/a: baseline ≤ 0 (within noise)"
		return r
	}
	v := num / den
	r.Value = &v
	return r
}

func (r Result) summary() string {
	if r.Error != "" {
		return "ERROR " + r.Error
	}
	s := fmt.Sprintf("c=1 p50 %s p99 %s", fmtUS(r.P50US), fmtUS(r.P99US))
	if r.TTFBP50US > 0 {
		s += " ttfb " + fmtUS(r.TTFBP50US)
	}
	s += fmt.Sprintf(" | c=%d %.0f req/s", r.Concurrency, r.RPS)
	if r.CPUPerReqUS > 0 {
		s += fmt.Sprintf(" cpu %s/req", fmtUS(r.CPUPerReqUS))
	}
	if n := int64(r.Errors) + r.ErrorsConc; n > 0 {
		s += fmt.Sprintf(" errors %d (%s)", n, firstLine(r.FirstError))
	}
	if r.Warning != "" {
		s += " warning: " + r.Warning
	}
	return s
}

func fmtUS(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a == 0:
		return "0"
	case a < 10:
		return fmt.Sprintf("%.1fµs", v)
	case a < 1000:
		return fmt.Sprintf("%.0fµs", v)
	default:
		return fmt.Sprintf("%.2fms", v/1000)
	}
}

func fmtAdded(p *float64) string {
	if p == nil {
		return "-"
	}
	if *p >= 0 {
		return "+" + fmtUS(*p)
	}
	return fmtUS(*p)
}

func fmtMiB(kb int64) string {
	if kb == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
}

// rows renders the main table of one workload as cells.
func (r *Report) rows(workload string) [][]string {
	var rows [][]string
	for _, res := range r.Results {
		if res.Workload != workload {
			continue
		}
		if res.Error != "" {
			rows = append(rows, []string{res.Target, "error: " + truncate(firstLine(res.Error), 100)})
			continue
		}
		ttfb, cpu := "-", "-"
		if res.TTFBP50US > 0 {
			ttfb = fmtUS(res.TTFBP50US)
		}
		if res.CPUPerReqUS > 0 {
			cpu = fmtUS(res.CPUPerReqUS)
		}
		if len(res.CPURoundsUS) > 1 {
			cpu += fmt.Sprintf(" (%s–%s)", fmtUS(slices.Min(res.CPURoundsUS)), fmtUS(slices.Max(res.CPURoundsUS)))
		}
		rows = append(rows, []string{
			res.Target,
			fmtUS(res.P50US), fmtUS(res.P99US),
			fmtAdded(res.AddedP50US), fmtAdded(res.AddedP99US),
			ttfb,
			fmt.Sprintf("%.0f", res.RPS),
			fmtAdded(res.AddedConcP50US), fmtAdded(res.AddedConcP99US),
			cpu,
			fmtUS(res.UpstreamCPUPerReqUS),
			fmt.Sprintf("%d", int64(res.Errors)+res.ErrorsConc),
		})
	}
	return rows
}

// tableHeader: p50 to ttfb at concurrency 1, the rest at -c.
var tableHeader = []string{"target", "p50", "p99", "+p50", "+p99", "ttfb p50", "req/s", "+p50 (c)", "+p99 (c)", "proxy CPU/req", "upstream CPU/req", "errors"}

func (r *Report) header() string {
	s := fmt.Sprintf("%d CPUs, %s; latency: c=1, n=%d for small (half for others); throughput, latency (c) and CPU: c=%d for %gs",
		r.NumCPU, r.GoVersion, r.Settings.N, r.Settings.Concurrency, r.Settings.DurationSec)
	if r.Settings.Rounds > 1 {
		s += fmt.Sprintf("; %d rounds, each result the median round by CPU/req (lowest–highest in brackets)", r.Settings.Rounds)
	}
	if r.Settings.GOMAXPROCS > 0 {
		s += fmt.Sprintf("; Go proxies at GOMAXPROCS=%d", r.Settings.GOMAXPROCS)
	}
	return s
}

// writeText prints the tables for a terminal.
func writeText(out io.Writer, r *Report) {
	fmt.Fprintf(out, "\ntollgate-bench: %s\n", r.header())
	for _, w := range r.Workloads {
		fmt.Fprintf(out, "\n%s — %s\n", w.Name, w.Desc)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(tableHeader, "\t")+"\t")
		for _, row := range r.rows(w.Name) {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		tw.Flush()
	}
	writeLanesText(out, r.Lanes)
	writeHeld(out, r.Held)
	fmt.Fprintln(out, "\nmemory")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tidle RSS\tpeak RSS\tafter load\tlog/req\tcold start\t")
	for _, t := range r.Targets {
		switch {
		case t.Skipped != "":
			fmt.Fprintf(tw, "%s\tskipped\t\t\t\t\t\n", t.Name)
		case t.PID != 0:
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", t.Name, fmtMiB(t.IdleRSSKB), fmtMiB(t.PeakRSSKB), fmtMiB(t.AfterLoadRSSKB), t.logPerReq(), t.coldStart())
		}
	}
	tw.Flush()
	if names, cells := r.ratioMatrix(); len(names) > 0 {
		fmt.Fprintln(out, "\nratios")
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\t")
		for _, w := range r.Workloads {
			fmt.Fprintf(tw, "%s\t", w.Name)
		}
		fmt.Fprintln(tw)
		for i, n := range names {
			fmt.Fprintf(tw, "%s\t%s\t\n", n, strings.Join(cells[i], "\t"))
		}
		tw.Flush()
		fmt.Fprintf(out, "(x): the baseline's added latency is under %dµs, so the ratio is mostly noise; n/a: it is ≤ 0\n", noisyAddedUS)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(out, "note:", n)
	}
	for _, res := range r.Results {
		if res.Warning != "" {
			fmt.Fprintf(out, "warning: %s/%s: %s\n", res.Workload, res.Target, res.Warning)
		}
	}
}

func fmtRatio(x Ratio) string {
	if x.Value == nil {
		return "n/a"
	}
	if x.Note != "" {
		return fmt.Sprintf("(%.2f×)", *x.Value)
	}
	return fmt.Sprintf("%.2f×", *x.Value)
}

// ratioMatrix lays the ratios out with one row per ratio name and one
// column per workload.
func (r *Report) ratioMatrix() (names []string, cells [][]string) {
	row := map[string]int{}
	for _, x := range r.Ratios {
		i, ok := row[x.Name]
		if !ok {
			i = len(names)
			row[x.Name] = i
			names = append(names, x.Name)
			cells = append(cells, make([]string, len(r.Workloads)))
			for j := range cells[i] {
				cells[i][j] = "-"
			}
		}
		for j, w := range r.Workloads {
			if w.Name == x.Workload {
				cells[i][j] = fmtRatio(x)
			}
		}
	}
	return names, cells
}

func writeJSONFile(path string, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func writeMarkdownFile(path string, r *Report) error {
	var b strings.Builder
	writeMarkdown(&b, r)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func writeMarkdown(out io.Writer, r *Report) {
	fmt.Fprintf(out, "# tollgate-bench\n\n%s, run %s.\n\n", r.header(), r.Started.Format(time.RFC3339))
	fmt.Fprintln(out, "+p50/+p99: latency added over direct. CPU/req: CPU time of the process over requests completed at the given concurrency.")
	for _, w := range r.Workloads {
		fmt.Fprintf(out, "\n## %s\n\n%s\n\n", w.Name, w.Desc)
		fmt.Fprintf(out, "| %s |\n|%s\n", strings.Join(tableHeader, " | "), strings.Repeat(" ---: |", len(tableHeader)))
		for _, row := range r.rows(w.Name) {
			fmt.Fprintf(out, "| %s |\n", strings.Join(row, " | "))
		}
	}
	writeLanesMarkdown(out, r.Lanes)
	fmt.Fprintf(out, "\n## memory\n\n| target | idle RSS | peak RSS | after load | log/req | cold start |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, t := range r.Targets {
		switch {
		case t.Skipped != "":
			fmt.Fprintf(out, "| %s | skipped | | | | |\n", t.Name)
		case t.PID != 0:
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s |\n", t.Name, fmtMiB(t.IdleRSSKB), fmtMiB(t.PeakRSSKB), fmtMiB(t.AfterLoadRSSKB), t.logPerReq(), t.coldStart())
		}
	}
	if names, cells := r.ratioMatrix(); len(names) > 0 {
		fmt.Fprintf(out, "\n## ratios\n\n| ratio |")
		for _, w := range r.Workloads {
			fmt.Fprintf(out, " %s |", w.Name)
		}
		fmt.Fprintf(out, "\n| --- |%s\n", strings.Repeat(" ---: |", len(r.Workloads)))
		for i, n := range names {
			fmt.Fprintf(out, "| %s | %s |\n", n, strings.Join(cells[i], " | "))
		}
		fmt.Fprintf(out, "\n(x): the baseline's added latency is under %dµs, so the ratio is mostly noise; n/a: it is ≤ 0.\n", noisyAddedUS)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(out)
		for _, n := range r.Notes {
			fmt.Fprintf(out, "- %s\n", n)
		}
	}
}
