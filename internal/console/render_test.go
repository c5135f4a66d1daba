package console

import (
	"fmt"
	"github.com/tollgate/tollgate/internal/store"
	"net/http/httptest"
	"regexp"
	"slices"
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
	svg := string(chartSVG([]bar{{Start: at, Groups: []admin.UsageGroup{g}}, {Start: at.Add(time.Hour)}}, time.Hour, pickMeasure("", g)))
	if strings.Contains(svg, "<script>") || !strings.Contains(svg, "&lt;script&gt;") {
		t.Errorf("unescaped name in the chart:\n%s", svg)
	}
	if empty := string(chartSVG([]bar{{Start: at}}, time.Hour, pickMeasure("", admin.UsageGroup{}))); !strings.Contains(empty, "No usage") {
		t.Errorf("an empty chart: %s", empty)
	}
	rows := string(groupsSVG([]usageRow{{UsageGroup: g, Label: g.Group}}, pickMeasure("cost", g)))
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

// Past twelve models, the chart draws the eleven largest and one series
// for the rest: distinct colours, and a page whose size does not grow
// with the number of models.
func TestChartMergesSmallModels(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var bars []bar
	for i := range 30 {
		var groups []admin.UsageGroup
		for m := range 16 {
			cost := int64(1000 * (m + 1))
			groups = append(groups, admin.UsageGroup{Group: fmt.Sprintf("model-%02d", m), Requests: 1, CostNanoUSD: &cost})
		}
		bars = append(bars, bar{Start: at.Add(time.Duration(i) * time.Hour), Groups: groups})
	}
	svg := string(chartSVG(bars, time.Hour, pickMeasure("cost", admin.UsageGroup{})))
	for m := 5; m < 16; m++ { // the eleven largest
		if !strings.Contains(svg, fmt.Sprintf(">model-%02d</text>", m)) {
			t.Errorf("model-%02d is not in the legend", m)
		}
	}
	if strings.Contains(svg, ">model-04</text>") || !strings.Contains(svg, ">5 other models</text>") {
		t.Errorf("the five smallest are not one series")
	}
	if n := strings.Count(svg, "<rect"); n != 30*12+12 {
		t.Errorf("%d rectangles, want 30 bars × 12 series + 12 legend keys", n)
	}
	if !strings.Contains(svg, "5 other models: $0.000015 (5 requests)") {
		t.Errorf("the merged series does not sum its models' cost and requests")
	}
	fills := map[string]bool{}
	for _, f := range regexp.MustCompile(`fill="(#[0-9a-f]{6})"`).FindAllStringSubmatch(svg, -1) {
		fills[f[1]] = true
	}
	if len(fills) != 12 {
		t.Errorf("%d colours for 12 series", len(fills))
	}
}

// The chart draws what the page asks for, says so on its axis, and each
// rectangle's title gives the value it is drawn from; a cost chart names
// the models it cannot draw for want of a price.
func TestChartMeasures(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cost := int64(2_000_000_000) // $2
	priced := admin.UsageGroup{Group: "priced", Requests: 3, Tokens: admin.Tokens{Input: 100, Output: 50}, CostNanoUSD: &cost}
	free := admin.UsageGroup{Group: "free", Requests: 9, Tokens: admin.Tokens{Input: 1000}, UnpricedRequests: 9}
	bars := []bar{{Start: at, Groups: []admin.UsageGroup{priced, free}}}
	for _, tt := range []struct {
		measure string
		want    []string
		not     []string
	}{
		{"requests", []string{">Requests</text>", "priced: 3 (3 requests)", "free: 9 (9 requests)", ">12</text>"}, nil},
		{"tokens", []string{">Tokens (input, cache and output)</text>", "priced: 150 (3 requests)", "free: 1,000 (9 requests)", ">1,150</text>"}, nil},
		{"cost", []string{">Cost (USD)</text>", "priced: $2.00 (3 requests)", ">free (no price: no cost drawn)</text>", ">$2.00</text>"}, []string{"free: "}},
	} {
		m := pickMeasure(tt.measure, admin.UsageGroup{})
		svg := string(chartSVG(slices.Clone(bars), time.Hour, m))
		for _, w := range tt.want {
			if !strings.Contains(svg, w) {
				t.Errorf("%s: %q is not in the chart:\n%s", tt.measure, w, svg)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(svg, w) {
				t.Errorf("%s: %q is in the chart", tt.measure, w)
			}
		}
	}
	// Without a choice: cost when any is known, else tokens.
	if m := pickMeasure("", admin.UsageGroup{CostNanoUSD: &cost}); m.Name != "cost" {
		t.Errorf("default with a cost: %s", m.Name)
	}
	if m := pickMeasure("bogus", admin.UsageGroup{}); m.Name != "tokens" {
		t.Errorf("default without a cost: %s", m.Name)
	}
}

// A model keeps its colour from chart to chart: on the overview with
// other models beside it, and alone on the usage page.
func TestChartColoursAreStable(t *testing.T) {
	names := []string{"claude-sonnet-4-5", "gpt-6-sol", "gemini-3-pro", "echo", "claude-haiku-4-5"}
	all := colours(names)
	if alone := colours(names[:1])[names[0]]; alone != all[names[0]] {
		t.Errorf("the largest series: %s alone, %s with others", alone, all[names[0]])
	}
	for _, n := range names {
		if alone := colours([]string{n})[n]; alone != colours([]string{n, "zz-other"})[n] {
			t.Errorf("%s changed colour when a smaller series was added", n)
		}
	}
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c] {
			t.Errorf("two series share %s", c)
		}
		seen[c] = true
	}
	row := string(groupsSVG([]usageRow{{UsageGroup: admin.UsageGroup{Group: "gpt-6-sol", Requests: 1}, Label: "gpt-6-sol"}}, pickMeasure("requests", admin.UsageGroup{})))
	if !strings.Contains(row, `fill="`+colours([]string{"gpt-6-sol"})["gpt-6-sol"]+`"`) {
		t.Errorf("the usage page colours gpt-6-sol otherwise:\n%s", row)
	}
}

func TestSignInTitle(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	c.render(w, httptest.NewRequest("GET", "/console/signin", nil), 200, "signin", nil, map[string]any{})
	if body := w.Body.String(); !strings.Contains(body, "<title>Sign in · tollgate</title>") {
		t.Errorf("the sign-in page's title:\n%s", body)
	}
}

// TestPagesParseOnFirstUse: New parses no page; rendering one parses
// that page alone; and every page parses.
func TestPagesParseOnFirstUse(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	parsed := func() (names []string) {
		for _, name := range pageNames {
			if c.pages[name].t != nil {
				names = append(names, name)
			}
		}
		return names
	}
	if p := parsed(); len(p) != 0 {
		t.Fatalf("New parsed %v; pages should be parsed when first rendered", p)
	}
	c.render(httptest.NewRecorder(), httptest.NewRequest("GET", "/console/signin", nil), 200, "signin", nil, map[string]any{})
	if p := parsed(); len(p) != 1 || p[0] != "signin" {
		t.Fatalf("rendering the sign-in page parsed %v, want [signin]", p)
	}
	for _, name := range pageNames {
		t.Run(name, func(t *testing.T) {
			if _, err := c.pages[name].template(); err != nil {
				t.Error(err)
			}
		})
	}
}

// A request's detail page shows what it was billed in units besides
// tokens (images, seconds of audio, …), and nothing of units when none.
func TestRequestPageUnits(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rec  store.Request
		want string
	}{
		{store.Request{ID: "req_1", Endpoint: "/v1/images/generations", Units: 3, Unit: "image"}, "<dd>3 images</dd>"},
		{store.Request{ID: "req_2", Endpoint: "/v1/audio/transcriptions", Units: 1, Unit: "second"}, "<dd>1 second</dd>"},
		{store.Request{ID: "req_3", Endpoint: "/v1/chat/completions"}, ""},
	} {
		w := httptest.NewRecorder()
		c.render(w, httptest.NewRequest("GET", "/console/requests/"+tc.rec.ID, nil), 200, "request", &viewer{}, map[string]any{"Title": "Request", "R": tc.rec})
		body := w.Body.String()
		if tc.want == "" && strings.Contains(body, "Billed in units") || tc.want != "" && !strings.Contains(body, tc.want) {
			t.Errorf("%s: want %q in:\n%s", tc.rec.ID, tc.want, body)
		}
	}
}
