package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
)

// The held-streams scenario: an agent turn streams for seconds to minutes,
// so a gateway's capacity is the streams it holds open at once, not its
// request rate. N clients each open one slow stream (the fake upstream
// sends -held-events chunks, -held-gap apart) to every target in turn, and
// the report gives what a proxy spends holding them: resident memory per
// open stream, CPU per relayed event, and the time to first event it adds
// to the upstream's own.

// heldSettings are the -held flags.
type heldSettings struct {
	ns     []int         // open streams per run
	events int           // content events per stream
	gap    time.Duration // between events
	// translated sends the streams through tollgate's translation lane.
	translated bool
	// anthropic sends them in the Anthropic Messages protocol.
	anthropic bool
	body      int // request body bytes
}

func (h heldSettings) lane() string {
	switch {
	case h.translated:
		return "translated"
	case h.anthropic:
		return "passthrough, anthropic"
	}
	return "passthrough"
}

// HeldResult is one target at one N.
type HeldResult struct {
	Target  string `json:"target"`
	Lane    string `json:"lane"` // tollgate's: passthrough or translated
	Streams int    `json:"streams"`
	// IdleRSSKB is before the streams open; OpenRSSKB with all of them
	// open (the highest sample while they are).
	IdleRSSKB int64   `json:"idle_rss_kb"`
	OpenRSSKB int64   `json:"open_rss_kb"`
	KBPerOpen float64 `json:"kb_per_open_stream"`
	// CPUPerEventUS is the proxy's CPU time over the run per event
	// relayed (the opening and closing of streams included).
	CPUPerEventUS float64 `json:"cpu_per_event_us"`
	TTFTp50MS     float64 `json:"ttft_p50_ms"`
	TTFTp99MS     float64 `json:"ttft_p99_ms"`
	// Errors are streams that failed or ended without every event and
	// the end marker.
	Errors int `json:"errors"`
}

// heldWorkload is the request each held stream sends: a small streaming
// chat request whose user field asks the fake upstream to go slowly.
func heldWorkload(h heldSettings) workload {
	api := apiOpenAI
	if h.anthropic {
		api = apiAnthropic
	}
	return workload{Name: "held", API: api, Stream: true, BodySize: max(h.body, 1), Translated: h.translated,
		User: fmt.Sprintf("held:%d:%d", h.events, h.gap.Milliseconds())}
}

// raiseOpenFiles lifts this process's soft open-file limit to its hard
// one: the scenario holds one connection per stream, and its children
// inherit the limit.
func raiseOpenFiles() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, err
		}
	}
	return lim.Cur, nil
}

// runHeld measures n held streams through t.
func runHeld(ctx context.Context, t *target, h heldSettings, n int) HeldResult {
	r := HeldResult{Target: t.Name, Lane: h.lane(), Streams: n}
	spec := newReqSpec(t, heldWorkload(h))
	t.sent.Add(int64(n))
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: n,
		DisableCompression:  true,
		WriteBufferSize:     4 << 10,
		ReadBufferSize:      4 << 10,
	}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	pid := t.pid()
	if pid != 0 {
		r.IdleRSSKB, _ = readStatusKB(pid, "VmRSS")
	}
	before, _ := readCPU(pid)

	var opened sync.WaitGroup
	opened.Add(n)
	var done sync.WaitGroup
	ttft := make([]time.Duration, n)
	var errs atomic.Int64
	// Streams open over half a stream's length, as a team's agents would,
	// not in one burst: every stream is open at once for the second half.
	pace := time.Duration(h.events) * h.gap / 2 / time.Duration(max(n, 1))
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			var once sync.Once
			first := func() { once.Do(opened.Done) }
			defer first()
			d, ok := heldStream(ctx, client, spec, h.events, h.gap)
			ttft[i] = d
			if !ok {
				errs.Add(1)
				return
			}
			first()
		}()
		if pace > 0 {
			time.Sleep(pace)
		}
	}
	// With every stream open (or failed), sample memory until they end.
	waitOpen := make(chan struct{})
	go func() { opened.Wait(); close(waitOpen) }()
	allDone := make(chan struct{})
	go func() { done.Wait(); close(allDone) }()
	<-waitOpen
	tick := time.NewTicker(h.gap / 4)
	defer tick.Stop()
	sample := func() {
		if pid != 0 {
			if kb, err := readStatusKB(pid, "VmRSS"); err == nil {
				r.OpenRSSKB = max(r.OpenRSSKB, kb)
			}
		}
	}
	sample()
wait:
	for {
		select {
		case <-allDone:
			break wait
		case <-tick.C:
			sample()
		}
	}
	after, _ := readCPU(pid)
	if pid != 0 {
		cpu, _ := cpuDelta(before, after)
		r.CPUPerEventUS = float64(cpu) / 1e3 / float64(n*h.events)
		r.KBPerOpen = float64(r.OpenRSSKB-r.IdleRSSKB) / float64(n)
	}
	r.Errors = int(errs.Load())
	r.TTFTp50MS = float64(percentile(ttft, 0.50)) / 1e6
	r.TTFTp99MS = float64(percentile(ttft, 0.99)) / 1e6
	return r
}

// heldStream sends one held request and reads its stream to the end:
// the time to its first event, and whether every event and the end
// marker came, and took as long as the held shape asks (a proxy that
// dropped the request's user field would get a fast stream instead).
func heldStream(ctx context.Context, client *http.Client, s *reqSpec, events int, gap time.Duration) (time.Duration, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(s.body))
	if err != nil {
		return 0, false
	}
	req.Header = s.header.Clone()
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return time.Since(start), false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return time.Since(start), false
	}
	br := bufio.NewReaderSize(resp.Body, 1<<10)
	var ttft time.Duration
	content, ended := 0, false
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && ttft == 0 {
			ttft = time.Since(start)
		}
		// An OpenAI chat stream ends with [DONE], an Anthropic one with
		// message_stop; content is a chunk with content or a block delta.
		switch {
		case bytes.HasPrefix(line, []byte("data: [DONE]")), bytes.HasPrefix(line, []byte(`data: {"type":"message_stop"`)):
			ended = true
		case bytes.HasPrefix(line, []byte("data: ")) && (bytes.Contains(line, []byte(`"content"`)) || bytes.Contains(line, []byte(`"content_block_delta"`))):
			content++
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			break
		}
	}
	held := time.Since(start) >= time.Duration(events-1)*gap*9/10
	return ttft, ended && content >= events && held
}

// writeHeld prints the held-streams table: the TTFT a proxy adds is its
// own less direct's at the same number of streams.
func writeHeld(out io.Writer, rs []HeldResult) {
	if len(rs) == 0 {
		return
	}
	direct := map[int]HeldResult{}
	for _, r := range rs {
		if r.Target == "direct" {
			direct[r.Streams] = r
		}
	}
	fmt.Fprintln(out, "\nheld streams")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tlane\tstreams\tidle RSS\topen RSS\tKB/stream\tCPU/event\tTTFT p50\tTTFT p99\t+p50\t+p99\terrors\t")
	for _, r := range rs {
		added := [2]string{"-", "-"}
		if d, ok := direct[r.Streams]; ok && r.Target != "direct" {
			added = [2]string{fmt.Sprintf("%.1fms", r.TTFTp50MS-d.TTFTp50MS), fmt.Sprintf("%.1fms", r.TTFTp99MS-d.TTFTp99MS)}
		}
		mem := [3]string{"-", "-", "-"}
		cpu := "-"
		if r.IdleRSSKB > 0 {
			mem = [3]string{fmtMiB(r.IdleRSSKB), fmtMiB(r.OpenRSSKB), fmt.Sprintf("%.1f", r.KBPerOpen)}
			cpu = fmt.Sprintf("%.1fµs", r.CPUPerEventUS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.1fms\t%.1fms\t%s\t%s\t%d\t\n", r.Target, r.Lane, r.Streams, mem[0], mem[1], mem[2], cpu,
			r.TTFTp50MS, r.TTFTp99MS, added[0], added[1], r.Errors)
	}
	tw.Flush()
}
