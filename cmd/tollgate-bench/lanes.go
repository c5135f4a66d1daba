package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// LaneRatio divides one workload's CPU per request by its Versus
// workload's on the same target: another protocol or lane against the one
// it is measured by. Each round's ratio is taken within the round, whose
// workloads ran seconds apart, so that a drift of the machine between
// rounds cancels; the median, lowest and highest of them are reported.
type LaneRatio struct {
	Target   string    `json:"target"`
	Workload string    `json:"workload"`
	Versus   string    `json:"versus"`
	Median   float64   `json:"median"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
	Rounds   []float64 `json:"rounds"` // in the order the rounds ran
}

// laneRatios computes the lane ratios of every workload whose Versus is in
// the run, for every target that measured the CPU of both in some round.
func laneRatios(ws []workload, rounds [][]Result) []LaneRatio {
	var out []LaneRatio
	for _, w := range ws {
		if w.Versus == "" || !slices.ContainsFunc(ws, func(v workload) bool { return v.Name == w.Versus }) {
			continue
		}
		var targets []string
		for _, round := range rounds {
			for _, r := range round {
				if r.Workload == w.Name && !slices.Contains(targets, r.Target) {
					targets = append(targets, r.Target)
				}
			}
		}
		for _, t := range targets {
			lr := LaneRatio{Target: t, Workload: w.Name, Versus: w.Versus}
			for _, round := range rounds {
				num, den := roundCPU(round, w.Name, t), roundCPU(round, w.Versus, t)
				if num > 0 && den > 0 {
					lr.Rounds = append(lr.Rounds, num/den)
				}
			}
			if len(lr.Rounds) == 0 {
				continue
			}
			lr.Median, lr.Min, lr.Max = medianOf(lr.Rounds), slices.Min(lr.Rounds), slices.Max(lr.Rounds)
			out = append(out, lr)
		}
	}
	return out
}

// roundCPU is the CPU per request of one workload on one target in a
// round; 0 when it failed or was not measured.
func roundCPU(round []Result, workload, target string) float64 {
	for _, r := range round {
		if r.Workload == workload && r.Target == target && r.Error == "" {
			return r.CPUPerReqUS
		}
	}
	return 0
}

// medianOf is the median of vs: the mean of the middle two when their
// number is even.
func medianOf(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// laneRows renders the lane ratios as cells: target, ratio, median,
// spread, each round's.
func laneRows(lrs []LaneRatio) [][]string {
	var rows [][]string
	for _, lr := range lrs {
		var each []string
		for _, v := range lr.Rounds {
			each = append(each, fmt.Sprintf("%.2f", v))
		}
		rows = append(rows, []string{lr.Target, lr.Workload + " ÷ " + lr.Versus,
			fmt.Sprintf("%.2f×", lr.Median), fmt.Sprintf("%.2f–%.2f×", lr.Min, lr.Max), strings.Join(each, " ")})
	}
	return rows
}

var laneHeader = []string{"target", "CPU/req", "median", "spread", "rounds"}

const laneNote = "each round's ratio is taken within the round; median, lowest–highest and each round's over the rounds"

func writeLanesText(out io.Writer, lrs []LaneRatio) {
	if len(lrs) == 0 {
		return
	}
	fmt.Fprintf(out, "\nlanes (%s)\n", laneNote)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(laneHeader, "\t")+"\t")
	for _, row := range laneRows(lrs) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
}

func writeLanesMarkdown(out io.Writer, lrs []LaneRatio) {
	if len(lrs) == 0 {
		return
	}
	fmt.Fprintf(out, "\n## lanes\n\nCPU per request of a workload over another's on the same target: %s.\n\n", laneNote)
	fmt.Fprintf(out, "| %s |\n|%s\n", strings.Join(laneHeader, " | "), strings.Repeat(" ---: |", len(laneHeader)))
	for _, row := range laneRows(lrs) {
		fmt.Fprintf(out, "| %s |\n", strings.Join(row, " | "))
	}
}
