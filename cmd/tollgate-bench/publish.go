package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// -publish: the generated part of docs/benchmarks.md, between two
// markers (everything outside them is left as it is), and its graphs as
// SVG files in docs/benchmarks/.

const (
	markBegin = "<!-- tollgate-bench:begin -->"
	markEnd   = "<!-- tollgate-bench:end -->"
)

// publishMeta is what the page says about the run besides its figures.
type publishMeta struct {
	Date     string   // YYYY-MM-DD
	Command  string   // the command that produced it
	Machine  string   // CPU, cores, memory, kernel
	Versions []string // Go, nginx, tollgate
}

// collectMeta describes this machine and run.
func collectMeta(ctx context.Context, cfg config, rep *Report) publishMeta {
	m := publishMeta{Date: cfg.date, Command: commandLine(cfg.args), Machine: machineInfo()}
	if m.Date == "" {
		m.Date = rep.Started.Format("2006-01-02")
	}
	m.Versions = append(m.Versions, rep.GoVersion)
	if out, err := exec.CommandContext(ctx, "nginx", "-v").CombinedOutput(); err == nil {
		m.Versions = append(m.Versions, strings.TrimPrefix(strings.TrimSpace(string(out)), "nginx version: "))
	}
	if out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output(); err == nil {
		m.Versions = append(m.Versions, "tollgate "+strings.TrimSpace(string(out)))
	}
	return m
}

// commandLine is the run's command as a reader would type it, without the
// flags that only say where this machine's copies of the results went.
func commandLine(args []string) string {
	out := []string{"go", "run", "./cmd/tollgate-bench"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && localFlags[name] {
			if !strings.Contains(a, "=") && name != "keep" {
				i++ // its value
			}
			continue
		}
		if a == "" || strings.ContainsAny(a, " \t'\"$*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// localFlags write copies of the results to local files.
var localFlags = map[string]bool{"json": true, "md": true, "keep": true}

// machineInfo reads the CPU model, memory and kernel from /proc.
func machineInfo() string {
	cpu := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
		f.Close()
	}
	s := fmt.Sprintf("%d CPUs", runtime.NumCPU())
	if cpu != "" {
		s = cpu + ", " + s
	}
	if kb, err := readStatusKBFile("/proc/meminfo", "MemTotal"); err == nil {
		s += fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		s += ", Linux " + strings.TrimSpace(string(b))
	}
	return s
}

// publish writes dir/benchmarks.md's generated section and the graphs.
func publish(dir string, rep *Report, meta publishMeta) error {
	charts := publishCharts(rep)
	svgDir := filepath.Join(dir, "benchmarks")
	if err := os.MkdirAll(svgDir, 0o755); err != nil {
		return err
	}
	written := map[string]bool{}
	for _, c := range charts {
		if err := os.WriteFile(filepath.Join(svgDir, c.file), c.chart.SVG(), 0o644); err != nil {
			return err
		}
		written[c.file] = true
	}
	// Graphs of an earlier run that this one has not (another -c,
	// another -held) would be left behind, linked from nowhere.
	ents, err := os.ReadDir(svgDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n := e.Name(); !written[n] && generatedGraph(n) {
			if err := os.Remove(filepath.Join(svgDir, n)); err != nil {
				return err
			}
		}
	}
	page := filepath.Join(dir, "benchmarks.md")
	doc, err := os.ReadFile(page)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := spliceGenerated(string(doc), renderPublished(rep, meta, charts))
	if err != nil {
		return fmt.Errorf("%s: %w", page, err)
	}
	return os.WriteFile(page, []byte(out), 0o644)
}

// generatedGraph tells the graphs publish writes from other files.
func generatedGraph(name string) bool {
	if !strings.HasSuffix(name, ".svg") {
		return false
	}
	for _, p := range []string{"cpu-", "latency-c", "memory-per-stream-", "memory-peak.", "cold-start."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// spliceGenerated puts gen between the markers of doc, which keeps the
// rest as it is. Without markers, they are added after the title and its
// first paragraph; an empty doc gets a title of its own.
func spliceGenerated(doc, gen string) (string, error) {
	block := markBegin + "\n" + strings.TrimRight(gen, "\n") + "\n" + markEnd
	i, j := strings.Index(doc, markBegin), strings.Index(doc, markEnd)
	switch {
	case i >= 0 && j > i:
		return doc[:i] + block + doc[j+len(markEnd):], nil
	case i >= 0 || j >= 0:
		return "", errors.New("has one tollgate-bench marker without the other, or in the wrong order")
	case strings.TrimSpace(doc) == "":
		return "# Benchmarks\n\n" + block + "\n", nil
	}
	lines := strings.SplitAfter(doc, "\n")
	pos, k := 0, 0
	for k < len(lines) && !strings.HasPrefix(lines[k], "# ") {
		k++
	}
	if k == len(lines) {
		return block + "\n\n" + doc, nil // no title: at the top
	}
	k++
	for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
		k++
	}
	for k < len(lines) && strings.TrimSpace(lines[k]) != "" && !strings.HasPrefix(lines[k], "#") {
		k++
	}
	for _, l := range lines[:k] {
		pos += len(l)
	}
	head, tail := doc[:pos], doc[pos:]
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	if strings.TrimSpace(tail) == "" {
		return head + "\n" + block + "\n", nil
	}
	if !strings.HasPrefix(tail, "\n") {
		tail = "\n" + tail
	}
	return head + "\n" + block + "\n" + tail, nil
}

// publishedChart is one graph and its file name.
type publishedChart struct {
	file  string
	chart barChart
}

// measured are the targets that ran, in the report's order.
func (r *Report) measured() []*TargetInfo {
	var out []*TargetInfo
	for _, t := range r.Targets {
		if t.Skipped == "" {
			out = append(out, t)
		}
	}
	return out
}

// heldResult is the held-streams result of one target at n streams.
func (r *Report) heldResult(target string, n int) *HeldResult {
	for i := range r.Held {
		if r.Held[i].Target == target && r.Held[i].Streams == n {
			return &r.Held[i]
		}
	}
	return nil
}

// heldNs are the numbers of held streams in the run, in order.
func (r *Report) heldNs() []int {
	var ns []int
	for _, h := range r.Held {
		if !slices.Contains(ns, h.Streams) {
			ns = append(ns, h.Streams)
		}
	}
	return ns
}

// publishCharts are the graphs of a run: CPU per request per workload,
// added latency on small at both concurrencies, memory per open stream,
// peak memory and cold start.
func publishCharts(r *Report) []publishedChart {
	var out []publishedChart
	add := func(file string, c barChart) {
		if len(c.Bars) > 0 {
			out = append(out, publishedChart{file, c})
		}
	}
	for _, w := range r.Workloads {
		c := barChart{Title: "Proxy CPU per request: " + w.Name, Unit: "µs", Note: w.Desc + "; c=" + fmt.Sprint(r.Settings.Concurrency)}
		for _, t := range r.measured() {
			if res := r.result(w.Name, t.Name); res != nil && res.CPUPerReqUS > 0 {
				c.Bars = append(c.Bars, bar{t.Name, res.CPUPerReqUS})
			}
		}
		add("cpu-"+w.Name+".svg", c)
	}
	for _, conc := range []int{1, r.Settings.Concurrency} {
		c := barChart{Title: fmt.Sprintf("Added latency p50 at c=%d: small", conc), Unit: "µs", Note: "over the fake upstream reached directly; 1 KB chat request"}
		for _, t := range r.measured() {
			res := r.result("small", t.Name)
			if res == nil || t.Name == "direct" {
				continue
			}
			v := res.AddedP50US
			if conc != 1 {
				v = res.AddedConcP50US
			}
			if v != nil {
				c.Bars = append(c.Bars, bar{t.Name, *v})
			}
		}
		add(fmt.Sprintf("latency-c%d-small.svg", conc), c)
	}
	for _, n := range r.heldNs() {
		c := barChart{Title: fmt.Sprintf("Memory per open stream, %d held streams", n), Unit: "KiB", Note: "resident memory with every stream open, less before, over the streams"}
		for _, t := range r.measured() {
			if h := r.heldResult(t.Name, n); h != nil && h.IdleRSSKB > 0 {
				c.Bars = append(c.Bars, bar{t.Name, h.KBPerOpen})
			}
		}
		add(fmt.Sprintf("memory-per-stream-%d.svg", n), c)
	}
	peak := barChart{Title: "Peak resident memory under requests", Unit: "MiB", Note: fmt.Sprintf("VmHWM after every workload at c=%d, before any held stream", r.Settings.Concurrency)}
	cold := barChart{Title: "Cold start", Unit: "ms", Note: "from exec to the first chat request answered"}
	for _, t := range r.measured() {
		if kb := cmp.Or(t.LoadPeakRSSKB, t.PeakRSSKB); kb > 0 {
			peak.Bars = append(peak.Bars, bar{t.Name, float64(kb) / 1024})
		}
		if t.ColdStartMS > 0 {
			cold.Bars = append(cold.Bars, bar{t.Name, t.ColdStartMS})
		}
	}
	add("memory-peak.svg", peak)
	add("cold-start.svg", cold)
	return out
}

// renderPublished is the generated section: how the run was made, then
// its tables and graphs.
func renderPublished(r *Report, m publishMeta, charts []publishedChart) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## tollgate and its peers (generated, run of %s)\n\n", m.Date)
	b.WriteString("This section and the graphs in `benchmarks/` beside this page are written by the command below; edit\nthe text" +
		" outside the markers only. Every target relays to the same fake upstream on 127.0.0.1, each in a\n" +
		"process of its own; the peers are built from their pinned releases on the Go module proxy.\n\n")
	fmt.Fprintf(&b, "    %s\n\n", m.Command)
	fmt.Fprintf(&b, "- Machine: %s.\n", m.Machine)
	if len(m.Versions) > 0 {
		fmt.Fprintf(&b, "- Versions: %s.\n", strings.Join(m.Versions, ", "))
	}
	fmt.Fprintf(&b, "- Settings: %s.\n", r.header())
	b.WriteString("- CPU per request is the proxy process's CPU time over the requests it completed; added latency is over\n" +
		"  the fake upstream reached directly, at the same concurrency (for a translated workload, with the client's\n" +
		"  protocol: small for small-translated). Ratios are to nginx on the same workload.\n")

	b.WriteString("\n### Targets\n\n| target | version | status |\n| --- | --- | --- |\n")
	for _, t := range r.Targets {
		version, status := cmp.Or(t.Version, "-"), "ran"
		switch {
		case t.Skipped != "":
			status = mdCell(firstLine(t.Skipped))
		case t.Name == "direct":
			status = "the fake upstream, no proxy"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.Name, mdCell(version), status)
	}

	cols := r.Workloads
	table := func(title string, cell func(res, ng *Result) string, skipDirect bool) {
		fmt.Fprintf(&b, "\n### %s\n\n| target |", title)
		for _, w := range cols {
			fmt.Fprintf(&b, " %s |", w.Name)
		}
		fmt.Fprintf(&b, "\n| --- |%s\n", strings.Repeat(" ---: |", len(cols)))
		for _, t := range r.measured() {
			if skipDirect && t.Name == "direct" {
				continue
			}
			fmt.Fprintf(&b, "| %s |", t.Name)
			for _, w := range cols {
				c := "-"
				if res := r.result(w.Name, t.Name); res != nil {
					c = cell(res, r.result(w.Name, "nginx"))
				}
				fmt.Fprintf(&b, " %s |", c)
			}
			b.WriteString("\n")
		}
	}
	table("CPU per request (÷ nginx)", func(res, ng *Result) string {
		if res.CPUPerReqUS <= 0 {
			return "-"
		}
		s := fmtUS(res.CPUPerReqUS)
		if ng != nil && ng.CPUPerReqUS > 0 {
			s += fmt.Sprintf(" (%.2f×)", res.CPUPerReqUS/ng.CPUPerReqUS)
		}
		return s
	}, true)
	table("Added latency p50 / p99 at c=1", func(res, _ *Result) string {
		return fmtAdded(res.AddedP50US) + " / " + fmtAdded(res.AddedP99US)
	}, true)
	table(fmt.Sprintf("Added latency p50 / p99 at c=%d", r.Settings.Concurrency), func(res, _ *Result) string {
		return fmtAdded(res.AddedConcP50US) + " / " + fmtAdded(res.AddedConcP99US)
	}, true)
	table(fmt.Sprintf("Throughput at c=%d, req/s (÷ nginx)", r.Settings.Concurrency), func(res, ng *Result) string {
		s := fmt.Sprintf("%.0f", res.RPS)
		if ng != nil && ng.RPS > 0 {
			s += fmt.Sprintf(" (%.2f×)", res.RPS/ng.RPS)
		}
		return s
	}, false)

	ns := r.heldNs()
	b.WriteString("\n### Memory and start-up\n\n| target | idle RSS | peak RSS, requests | RSS after the load | peak RSS, all | cold start |")
	for _, n := range ns {
		fmt.Fprintf(&b, " per open stream, %d |", n)
	}
	fmt.Fprintf(&b, "\n| --- | ---: | ---: | ---: | ---: | ---: |%s\n", strings.Repeat(" ---: |", len(ns)))
	for _, t := range r.measured() {
		if t.PID == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |", t.Name, fmtMiB(t.IdleRSSKB), fmtMiB(cmp.Or(t.LoadPeakRSSKB, t.PeakRSSKB)), fmtMiB(t.AfterLoadRSSKB), fmtMiB(t.PeakRSSKB), t.coldStart())
		for _, n := range ns {
			c := "-"
			if h := r.heldResult(t.Name, n); h != nil && h.IdleRSSKB > 0 {
				c = fmt.Sprintf("%.1f KiB", h.KBPerOpen)
				if h.Errors > 0 {
					c += fmt.Sprintf(" (%d failed)", h.Errors)
				}
			}
			fmt.Fprintf(&b, " %s |", c)
		}
		b.WriteString("\n")
	}
	if r.Settings.SettleSec > 0 {
		fmt.Fprintf(&b, "\nRSS after the load: once the workloads ended, every target rested %.0f s, idle, before its resident\nmemory was read again.\n", r.Settings.SettleSec)
	}
	if len(ns) > 0 {
		b.WriteString("\nPeak RSS, requests: after every workload, before the held streams; all: after them too. Per open\n" +
			"stream: resident memory with every held stream open less before they opened, over the number of\nstreams (" +
			r.heldLane() + "). Cold start: from exec to the first chat request answered, polled every 10 ms.\n")
	}
	if len(charts) > 0 {
		b.WriteString("\n### Graphs\n\n")
		for _, c := range charts {
			fmt.Fprintf(&b, "![%s](benchmarks/%s)\n", c.chart.Title, c.file)
		}
	}
	return b.String()
}

// heldLane describes the held streams of the run.
func (r *Report) heldLane() string {
	if len(r.Held) == 0 {
		return ""
	}
	return "lane: " + r.Held[0].Lane
}

// mdCell keeps a table cell on one line and its pipes escaped.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

// readStatusKBFile reads a "Field: N kB" line of a /proc file.
func readStatusKBFile(path, field string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			fs := strings.Fields(rest)
			if len(fs) == 0 {
				break
			}
			return strconv.ParseInt(fs[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, field)
}
