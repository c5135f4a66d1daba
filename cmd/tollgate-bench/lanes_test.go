package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestLaneRatios(t *testing.T) {
	ws := []workload{
		{Name: "small"},
		{Name: "gemini-client", Versus: "small"},
		{Name: "gemini-client-translated", Versus: "gemini-client"},
		{Name: "stream-gemini-client", Versus: "stream"}, // stream is not in the run
	}
	r := func(w, target string, cpu float64) Result {
		return Result{Workload: w, Target: target, CPUPerReqUS: cpu}
	}
	failed := Result{Workload: "gemini-client", Target: "tollgate", Error: "bad response"}
	rounds := [][]Result{
		{r("small", "tollgate", 100), r("small", "nginx", 40), r("gemini-client", "tollgate", 110), r("gemini-client", "nginx", 40),
			r("gemini-client-translated", "tollgate", 165), r("stream-gemini-client", "tollgate", 200)},
		{r("small", "tollgate", 200), r("small", "nginx", 40), r("gemini-client", "tollgate", 180), r("gemini-client", "nginx", 44),
			r("gemini-client-translated", "tollgate", 270), r("stream-gemini-client", "tollgate", 200)},
		{r("small", "tollgate", 100), r("small", "nginx", 40), failed, r("gemini-client", "nginx", 48),
			r("gemini-client-translated", "tollgate", 140), r("stream-gemini-client", "tollgate", 200)},
	}
	got := laneRatios(ws, rounds)
	want := []LaneRatio{
		{Target: "tollgate", Workload: "gemini-client", Versus: "small", Median: 1, Min: 0.9, Max: 1.1, Rounds: []float64{1.1, 0.9}},
		{Target: "nginx", Workload: "gemini-client", Versus: "small", Median: 1.1, Min: 1, Max: 1.2, Rounds: []float64{1, 1.1, 1.2}},
		{Target: "tollgate", Workload: "gemini-client-translated", Versus: "gemini-client", Median: 1.5, Min: 1.5, Max: 1.5, Rounds: []float64{1.5, 1.5}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	for i, w := range want {
		g := got[i]
		if g.Target != w.Target || g.Workload != w.Workload || g.Versus != w.Versus || !near(g.Median, w.Median) ||
			!near(g.Min, w.Min) || !near(g.Max, w.Max) || !slices.EqualFunc(g.Rounds, w.Rounds, near) {
			t.Errorf("%d: got %+v, want %+v", i, g, w)
		}
	}

	var text, md bytes.Buffer
	writeLanesText(&text, got)
	writeLanesMarkdown(&md, got)
	for _, s := range []string{"gemini-client-translated ÷ gemini-client", "1.50×", "0.90–1.10×"} {
		if !strings.Contains(text.String(), s) || !strings.Contains(md.String(), s) {
			t.Errorf("%q missing:\n%s\n%s", s, text.String(), md.String())
		}
	}
}

func TestMedianOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := medianOf(c.in); got != c.want {
			t.Errorf("medianOf(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Every Versus names a workload, and no workload is measured by itself.
func TestWorkloadVersus(t *testing.T) {
	for _, w := range allWorkloads {
		if w.Versus == "" {
			continue
		}
		if _, ok := workloadByName(w.Versus); !ok || w.Versus == w.Name {
			t.Errorf("%s: versus %q", w.Name, w.Versus)
		}
	}
}
