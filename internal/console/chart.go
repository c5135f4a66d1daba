package console

import (
	"cmp"
	"fmt"
	"hash/fnv"
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

// palette colours the series. A series takes the colour its name hashes
// to (the next free one when two names in one chart meet), so a model
// keeps its colour from page to page and window to window.
var palette = []string{"#3b6fd8", "#e07b39", "#3aa675", "#b04fc4", "#d2a400", "#d24f6a",
	"#4fb3c4", "#8c6d3f", "#6b8e23", "#c46b9a", "#5a5fbf", "#7a7a7a"}

// colours gives each name a colour of the palette: its hashed one, or the
// next free one. names come largest first, so the largest series keep
// their own colour when two collide.
func colours(names []string) map[string]string {
	used := make([]bool, len(palette))
	out := make(map[string]string, len(names))
	for _, n := range names {
		h := fnv.New32a()
		h.Write([]byte(n))
		i := int(h.Sum32() % uint32(len(palette)))
		for k := 0; k < len(palette) && used[i]; k++ {
			i = (i + 1) % len(palette)
		}
		used[i] = true
		out[n] = palette[i]
	}
	return out
}

// measure is what a chart's bars count: the page's choice (?measure=).
type measure struct {
	Name  string // requests, tokens or cost: the query value
	Axis  string // the axis title, with its unit
	value func(g admin.UsageGroup) int64
	text  func(v int64) string
}

var measures = []measure{
	{Name: "requests", Axis: "Requests", value: func(g admin.UsageGroup) int64 { return g.Requests }, text: num},
	{Name: "tokens", Axis: "Tokens (input, cache and output)", value: func(g admin.UsageGroup) int64 {
		t := g.Tokens
		return t.Input + t.CacheRead + t.CacheWrite5m + t.CacheWrite1h + t.Output
	}, text: num},
	{Name: "cost", Axis: "Cost (USD)", value: func(g admin.UsageGroup) int64 {
		if g.CostNanoUSD == nil {
			return 0
		}
		return *g.CostNanoUSD
	}, text: usd},
}

// pickMeasure is the measure named by the page's query, else cost when any
// cost is known, else tokens.
func pickMeasure(name string, total admin.UsageGroup) measure {
	for _, m := range measures {
		if m.Name == name {
			return m
		}
	}
	if total.CostNanoUSD != nil && *total.CostNanoUSD > 0 {
		return measures[2]
	}
	return measures[1]
}

// unpriced says whether a group has usage whose cost is not known, so a
// cost chart can say why it draws no bar for it.
func unpriced(g admin.UsageGroup) bool { return g.UnpricedRequests > 0 }

// chartSVG draws stacked bars over time, a series per model, with a
// labelled value axis, a legend and a title for each rectangle.
func chartSVG(bars []bar, bucket time.Duration, m measure) template.HTML {
	const w, h, top, bottom, left = 960.0, 220.0, 14.0, 24.0, 92.0
	totals := map[string]int64{}
	noCost := map[string]bool{}
	var peak int64
	for _, b := range bars {
		var sum int64
		for _, g := range b.Groups {
			sum += m.value(g)
			totals[g.Group] += m.value(g)
			if m.Name == "cost" && unpriced(g) {
				noCost[g.Group] = true
			}
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
	colour := colours(models)
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s over time by model">`,
		w, h+20*float64(1+len(models)/4), template.HTMLEscapeString(m.Axis))
	if peak == 0 {
		msg := "No usage in this window."
		if len(noCost) > 0 {
			msg = "No priced usage in this window: show requests or tokens."
		}
		fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f" class="empty">%s</text></svg>`, w/2, h/2, msg)
		return template.HTML(sb.String())
	}
	// The value axis: its title, and gridlines at 0, half and the peak.
	plot := h - top - bottom
	fmt.Fprintf(&sb, `<text class="axis" transform="translate(12 %.0f) rotate(-90)" text-anchor="middle">%s</text>`,
		top+plot/2, template.HTMLEscapeString(m.Axis))
	for _, f := range []float64{0, .5, 1} {
		y := h - bottom - f*plot
		fmt.Fprintf(&sb, `<line class="grid" x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f"/><text class="tick" x="%.0f" y="%.1f" text-anchor="end">%s</text>`,
			left, w, y, y, left-4, y+4, template.HTMLEscapeString(m.text(int64(f*float64(peak)))))
	}
	slot := (w - left) / float64(len(bars))
	for i, b := range bars {
		x := left + float64(i)*slot
		y := h - bottom
		groups := slices.Clone(b.Groups)
		slices.SortFunc(groups, func(a, c admin.UsageGroup) int {
			return cmp.Compare(slices.Index(models, a.Group), slices.Index(models, c.Group))
		})
		when := template.HTMLEscapeString(b.Start.UTC().Format(labelFormat(bucket)))
		for _, g := range groups {
			v := m.value(g)
			if v == 0 {
				continue
			}
			hgt := float64(v) / float64(peak) * plot
			y -= hgt
			fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s (%s requests)</title></rect>`,
				x+1, y, max(slot-2, 1), hgt, colour[g.Group], when, template.HTMLEscapeString(g.Group),
				template.HTMLEscapeString(m.text(v)), num(g.Requests))
		}
		if i%max((len(bars)+5)/6, 1) == 0 { // six labels at most
			fmt.Fprintf(&sb, `<text x="%.1f" y="%.0f" class="tick">%s</text>`, x+1, h-8, when)
		}
	}
	for i, k := range models {
		x, y := left+float64(i%4)*(w-left)/4, h+14+20*float64(i/4)
		name := k
		if noCost[k] {
			name += " (no price: no cost drawn)"
		}
		fmt.Fprintf(&sb, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f" class="legend">%s</text>`,
			x, y-10, colour[k], x+18, y, template.HTMLEscapeString(clip(name, 34)))
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

// groupsSVG draws one horizontal bar per usage row, in the chosen measure,
// each with its value written beside it.
func groupsSVG(rows []usageRow, m measure) template.HTML {
	if len(rows) == 0 {
		return ""
	}
	var peak int64
	for _, r := range rows {
		peak = max(peak, m.value(r.UsageGroup))
	}
	const w, rowH, barX, barW = 960.0, 22.0, 250.0, 560.0
	shown := rows[:min(len(rows), 20)]
	labels := make([]string, len(shown))
	for i, r := range shown {
		labels[i] = r.Label
	}
	colour := colours(labels)
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s by group">`,
		w, rowH*float64(len(shown)+1)+4, template.HTMLEscapeString(m.Axis))
	fmt.Fprintf(&sb, `<text x="%.0f" y="14" class="axis">%s</text>`, barX, template.HTMLEscapeString(m.Axis))
	for i, r := range shown {
		v := m.value(r.UsageGroup)
		bw := 0.0
		if peak > 0 {
			bw = float64(v) / float64(peak) * barW
		}
		val := m.text(v)
		if m.Name == "cost" && unpriced(r.UsageGroup) {
			val = usdPtr(r.CostNanoUSD, r.UnpricedRequests) // "unknown" where none is priced
		}
		y := float64(i+1) * rowH
		fmt.Fprintf(&sb, `<text x="0" y="%.0f" class="legend">%s</text><rect x="%.0f" y="%.0f" width="%.1f" height="16" fill="%s"><title>%s: %s</title></rect><text x="%.1f" y="%.0f" class="tick">%s</text>`,
			y+14, template.HTMLEscapeString(clip(r.Label, 34)), barX, y+2, max(bw, 1), colour[r.Label],
			template.HTMLEscapeString(r.Label), template.HTMLEscapeString(val), barX+max(bw, 1)+6, y+14, template.HTMLEscapeString(val))
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
