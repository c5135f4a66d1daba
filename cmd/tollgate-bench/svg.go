package main

import (
	"fmt"
	"html"
	"strings"
)

// A small horizontal bar chart, written by hand so that the published
// graphs need no dependency and come out byte for byte the same from the
// same figures.

// bar is one labelled value.
type bar struct {
	Label string
	Value float64
}

// barChart is one graph: a bar per target.
type barChart struct {
	Title string
	Unit  string // printed after each value
	Note  string // a line under the title
	Bars  []bar
}

const (
	svgWidth   = 720
	svgLabelW  = 170 // the labels' column
	svgValueW  = 110 // room for the value after the longest bar
	svgRowH    = 26
	svgBarH    = 18
	svgTop     = 58 // title and note
	svgBottom  = 14
	svgFont    = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
	svgBarArea = svgWidth - svgLabelW - svgValueW - 20
)

// barColor tells tollgate's targets, the reference proxies and the peers
// apart.
func barColor(label string) string {
	switch {
	case strings.HasPrefix(label, "tollgate"):
		return "#1f6feb"
	case label == "nginx" || label == "reverseproxy" || label == "direct":
		return "#8b949e"
	default:
		return "#d9822b"
	}
}

// fmtValue prints a value with three significant figures at most, the
// same way on every machine.
func fmtValue(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// SVG renders the chart. Negative values (an added latency within noise)
// are drawn as empty bars with their value printed.
func (c barChart) SVG() []byte {
	maxV := 0.0
	for _, b := range c.Bars {
		maxV = max(maxV, b.Value)
	}
	h := svgTop + len(c.Bars)*svgRowH + svgBottom
	var s strings.Builder
	fmt.Fprintf(&s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n",
		svgWidth, h, svgWidth, h, html.EscapeString(c.Title))
	fmt.Fprintf(&s, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", svgWidth, h)
	fmt.Fprintf(&s, "<text x=\"10\" y=\"24\" %s font-size=\"16\" font-weight=\"bold\" fill=\"#24292f\">%s</text>\n", svgFont, html.EscapeString(c.Title))
	if c.Note != "" {
		fmt.Fprintf(&s, "<text x=\"10\" y=\"44\" %s font-size=\"12\" fill=\"#57606a\">%s</text>\n", svgFont, html.EscapeString(c.Note))
	}
	for i, b := range c.Bars {
		y := svgTop + i*svgRowH
		w := 0
		if maxV > 0 && b.Value > 0 {
			w = max(1, int(b.Value/maxV*svgBarArea+0.5))
		}
		fmt.Fprintf(&s, "<text x=\"%d\" y=\"%d\" %s font-size=\"13\" text-anchor=\"end\" fill=\"#24292f\">%s</text>\n",
			svgLabelW-8, y+svgBarH-4, svgFont, html.EscapeString(b.Label))
		fmt.Fprintf(&s, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", svgLabelW, y, w, svgBarH, barColor(b.Label))
		fmt.Fprintf(&s, "<text x=\"%d\" y=\"%d\" %s font-size=\"12\" fill=\"#24292f\">%s %s</text>\n",
			svgLabelW+w+6, y+svgBarH-4, svgFont, fmtValue(b.Value), html.EscapeString(c.Unit))
	}
	s.WriteString("</svg>\n")
	return []byte(s.String())
}
