package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
)

func TestFormatting(t *testing.T) {
	n := int64(1500)
	for _, tt := range []struct{ got, want string }{
		{num(0), "0"}, {num(999), "999"}, {num(1000), "1,000"}, {num(-1234567), "-1,234,567"},
		{usdPtr(nil, 0), "$0.00"}, {usdPtr(nil, 3), "unknown"}, {usdPtr(&n, 0), "$0.0000015"}, {usdPtr(&n, 2), "$0.0000015 + unknown"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// Model names come from clients and configuration: the SVG escapes them.
func TestChartEscapesNames(t *testing.T) {
	cost := int64(5)
	g := admin.UsageGroup{Group: `<script>alert(1)</script>`, Requests: 1, CostNanoUSD: &cost}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	svg := string(chartSVG([]bar{{Start: at, Groups: []admin.UsageGroup{g}}, {Start: at.Add(time.Hour)}}, time.Hour, costOrTokens(g)))
	if strings.Contains(svg, "<script>") || !strings.Contains(svg, "&lt;script&gt;") {
		t.Errorf("unescaped name in the chart:\n%s", svg)
	}
	if empty := string(chartSVG([]bar{{Start: at}}, time.Hour, costOrTokens(admin.UsageGroup{}))); !strings.Contains(empty, "No usage") {
		t.Errorf("an empty chart: %s", empty)
	}
	rows := string(groupsSVG([]usageRow{{UsageGroup: g, Label: g.Group}}))
	if strings.Contains(rows, "<script>") {
		t.Errorf("unescaped label: %s", rows)
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"24h": now.Add(-24 * time.Hour), "7d": now.Add(-7 * 24 * time.Hour),
		"2026-11-01": time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), "2026-11-02T03:04:05Z": time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC),
	} {
		if got, err := parseWhen(in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseWhen("yesterday", now); err == nil {
		t.Error("parseWhen(yesterday) succeeded")
	}
}

// Past eight models, the chart draws the seven largest and one series for
// the rest: distinct colours, and a page whose size does not grow with
// the number of models.
func TestChartMergesSmallModels(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var bars []bar
	for i := range 30 {
		var groups []admin.UsageGroup
		for m := range 12 {
			cost := int64(1000 * (m + 1))
			groups = append(groups, admin.UsageGroup{Group: fmt.Sprintf("model-%02d", m), Requests: 1, CostNanoUSD: &cost})
		}
		bars = append(bars, bar{Start: at.Add(time.Duration(i) * time.Hour), Groups: groups})
	}
	svg := string(chartSVG(bars, time.Hour, costOrTokens(admin.UsageGroup{CostNanoUSD: new(int64(1))})))
	for m := 5; m < 12; m++ { // the seven largest
		if !strings.Contains(svg, fmt.Sprintf(">model-%02d</text>", m)) {
			t.Errorf("model-%02d is not in the legend", m)
		}
	}
	if strings.Contains(svg, ">model-04</text>") || !strings.Contains(svg, ">5 other models</text>") {
		t.Errorf("the five smallest are not one series")
	}
	if n := strings.Count(svg, "<rect"); n != 30*8+8 {
		t.Errorf("%d rectangles, want 30 bars × 8 series + 8 legend keys", n)
	}
	if !strings.Contains(svg, "5 other models: 5 requests") {
		t.Errorf("the merged series does not sum its models' requests")
	}
}
