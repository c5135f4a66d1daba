package console

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
)

// Charts are drawn here as SVG, in the page: no chart library, no script.

// bar is one time bucket of the overview chart, split by model.
type bar struct {
	Start  time.Time
	Groups []admin.UsageGroup
}

// palette colours the series; the same model keeps its colour.
var palette = []string{"#3b6fd8", "#e07b39", "#3aa675", "#b04fc4", "#d2a400", "#d24f6a", "#4fb3c4", "#7a7a7a"}

// measure is what the bars count: cost when any is known, else tokens.
type measure func(g admin.UsageGroup) int64

func costOrTokens(total admin.UsageGroup) measure {
	if total.CostNanoUSD != nil && *total.CostNanoUSD > 0 {
		return func(g admin.UsageGroup) int64 {
			if g.CostNanoUSD == nil {
				return 0
			}
			return *g.CostNanoUSD
		}
	}
	return func(g admin.UsageGroup) int64 {
		t := g.Tokens
		return t.Input + t.CacheRead + t.CacheWrite5m + t.CacheWrite1h + t.Output
	}
}

// chartSVG draws stacked bars over time, a series per model, with a
// legend and a title for each rectangle.
func chartSVG(bars []bar, bucket time.Duration, m measure) template.HTML {
	const w, h, top, bottom, left = 960.0, 220.0, 10.0, 24.0, 8.0
	totals := map[string]int64{}
	var peak int64
	for _, b := range bars {
		var sum int64
		for _, g := range b.Groups {
			sum += m(g)
			totals[g.Group] += m(g)
		}
		peak = max(peak, sum)
	}
	models := make([]string, 0, len(totals))
	for k := range totals {
		models = append(models, k)
	}
	slices.SortFunc(models, func(a, b string) int { return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a, b)) })
	// Past the palette's colours, the smallest models are drawn as one
	// series: colours stay distinct, and the page stays small whatever
	// the number of models.
	if len(models) > len(palette) {
		other := fmt.Sprintf("%d other models", len(models)-len(palette)+1)
		kept := map[string]bool{}
		for _, k := range models[:len(palette)-1] {
			kept[k] = true
		}
		for i, b := range bars {
			bars[i].Groups = mergeOthers(b.Groups, kept, other)
		}
		models = append(models[:len(palette)-1], other)
	}
	colour := map[string]string{}
	for i, k := range models {
		colour[k] = palette[i%len(palette)]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="usage over time by model">`, w, h+20*float64(1+len(models)/4))
	if peak == 0 {
		fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f" class="empty">No usage in this window.</text></svg>`, w/2, h/2)
		return template.HTML(sb.String())
	}
	slot := (w - left) / float64(len(bars))
	for i, b := range bars {
		x := left + float64(i)*slot
		y := h - bottom
		groups := slices.Clone(b.Groups)
		slices.SortFunc(groups, func(a, c admin.UsageGroup) int {
			return cmp.Compare(slices.Index(models, a.Group), slices.Index(models, c.Group))
		})
		for _, g := range groups {
			v := m(g)
			if v == 0 {
				continue
			}
			hgt := float64(v) / float64(peak) * (h - top - bottom)
			y -= hgt
			fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %d requests</title></rect>`,
				x+1, y, max(slot-2, 1), hgt, colour[g.Group], template.HTMLEscapeString(b.Start.UTC().Format(labelFormat(bucket))), template.HTMLEscapeString(g.Group), g.Requests)
		}
		if i%max((len(bars)+5)/6, 1) == 0 { // six labels at most
			fmt.Fprintf(&sb, `<text x="%.1f" y="%.0f" class="tick">%s</text>`, x+1, h-8, template.HTMLEscapeString(b.Start.UTC().Format(labelFormat(bucket))))
		}
	}
	for i, k := range models {
		x, y := left+float64(i%4)*240, h+14+20*float64(i/4)
		fmt.Fprintf(&sb, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f" class="legend">%s</text>`,
			x, y-10, colour[k], x+18, y, template.HTMLEscapeString(k))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

// mergeOthers returns groups with those not kept summed into one group
// named other.
func mergeOthers(groups []admin.UsageGroup, kept map[string]bool, other string) []admin.UsageGroup {
	out := make([]admin.UsageGroup, 0, len(kept)+1)
	rest := admin.UsageGroup{Group: other}
	merged := false
	for _, g := range groups {
		if kept[g.Group] {
			out = append(out, g)
			continue
		}
		merged = true
		rest.Add(g)
	}
	if merged {
		out = append(out, rest)
	}
	return out
}

func labelFormat(bucket time.Duration) string {
	switch {
	case bucket >= 24*time.Hour:
		return "Jan 2"
	case bucket >= 6*time.Hour:
		return "Jan 2 15:04"
	}
	return "15:04"
}

// groupsSVG draws one horizontal bar per usage row (cost, else tokens).
func groupsSVG(rows []usageRow) template.HTML {
	if len(rows) == 0 {
		return ""
	}
	var total admin.UsageGroup
	for _, r := range rows {
		if r.CostNanoUSD != nil {
			n := *r.CostNanoUSD
			if total.CostNanoUSD != nil {
				n += *total.CostNanoUSD
			}
			total.CostNanoUSD = &n
		}
	}
	m := costOrTokens(total)
	var peak int64
	for _, r := range rows {
		peak = max(peak, m(r.UsageGroup))
	}
	const w, rowH = 960.0, 22.0
	shown := rows[:min(len(rows), 20)]
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="usage by group">`, w, rowH*float64(len(shown))+4)
	for i, r := range shown {
		v := m(r.UsageGroup)
		bw := 0.0
		if peak > 0 {
			bw = float64(v) / float64(peak) * (w - 260)
		}
		y := float64(i) * rowH
		fmt.Fprintf(&sb, `<text x="0" y="%.0f" class="legend">%s</text><rect x="250" y="%.0f" width="%.1f" height="16" fill="%s"><title>%s</title></rect>`,
			y+14, template.HTMLEscapeString(clip(r.Label, 34)), y+2, max(bw, 1), palette[i%len(palette)], template.HTMLEscapeString(r.Label))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
