package console

import (
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
