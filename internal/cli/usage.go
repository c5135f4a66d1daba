package cli

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/units"
)

func usageCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("usage", stderr)
	bf := addBackendFlags(fs)
	since := fs.String("since", "24h", "start: a duration ago (24h, 7d), a date or an RFC 3339 time")
	until := fs.String("until", "", "end (exclusive), in the same forms (default: now)")
	by := fs.String("by", "model", "group by model, key, day (UTC) or provider")
	key := fs.String("key", "", "only this key's requests (a key ID)")
	format := fs.String("format", "table", "table, json or csv")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	now := clock.Now()
	u, err := admin.ParseTime(*until, now, now)
	if err != nil {
		return fmt.Errorf("usage: --until: %w", err)
	}
	s, err := admin.ParseTime(*since, now, u.Add(-24*time.Hour))
	if err != nil {
		return fmt.Errorf("usage: --since: %w", err)
	}
	switch *format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("usage: --format %q: want table, json or csv", *format)
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	rep, err := b.Usage(context.Background(), admin.UsageQuery{Since: s, Until: u, GroupBy: store.GroupBy(*by), KeyID: *key})
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		return printJSON(stdout, rep)
	case "csv":
		return usageCSV(stdout, rep)
	}
	return usageTable(stdout, rep)
}

func usageTable(w io.Writer, rep admin.UsageReport) error {
	fmt.Fprintf(w, "Usage from %s to %s, by %s\n\n", rep.Since.Format(time.RFC3339), rep.Until.Format(time.RFC3339), rep.GroupBy)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "GROUP\tREQUESTS\tERRORS\tINPUT\tCACHE READ\tCACHE WRITE 5M\tCACHE WRITE 1H\tOUTPUT\tREASONING\tCOST USD\t")
	row := func(g admin.UsageGroup) {
		group := g.Group
		if group == "" && rep.GroupBy == "key" {
			group = "(master key)"
		}
		t := g.Tokens
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", printable(group), g.Requests, g.Errors, t.Input, t.CacheRead,
			t.CacheWrite5m, t.CacheWrite1h, t.Output, t.Reasoning, costCell(g))
	}
	for _, g := range rep.Data {
		row(g)
	}
	total := rep.Total
	total.Group = "TOTAL"
	row(total)
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := rep.Total.UnpricedRequests; n > 0 {
		what := "requests"
		if n == 1 {
			what = "request"
		}
		fmt.Fprintf(w, "\n* %d %s used a model without a price: the cost is unknown and not in the sums.\n"+
			"  Set pricing for those models in the configuration.\n", n, what)
	}
	return nil
}

// costCell shows a group's cost, marked when part of it is unknown.
func costCell(g admin.UsageGroup) string {
	switch {
	case g.CostNanoUSD == nil && g.UnpricedRequests > 0:
		return "unknown *"
	case g.CostNanoUSD == nil:
		return "0.00"
	case g.UnpricedRequests > 0:
		return formatUSD(*g.CostNanoUSD) + " + unknown *"
	}
	return formatUSD(*g.CostNanoUSD)
}

// formatUSD renders nano-USD exactly, to the cent at least.
func formatUSD(nano int64) string { return units.FormatNano(nano, 2) }

func usageCSV(w io.Writer, rep admin.UsageReport) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"group", "requests", "errors", "input", "cache_read", "cache_write_5m", "cache_write_1h",
		"output", "reasoning", "cost_nano_usd", "cost_usd", "unpriced_requests"})
	for _, g := range rep.Data {
		t := g.Tokens
		cost, usd := "", "" // empty: unknown
		if g.CostNanoUSD != nil {
			cost, usd = strconv.FormatInt(*g.CostNanoUSD, 10), formatUSD(*g.CostNanoUSD)
		}
		cw.Write([]string{g.Group, i64(g.Requests), i64(g.Errors), i64(t.Input), i64(t.CacheRead), i64(t.CacheWrite5m),
			i64(t.CacheWrite1h), i64(t.Output), i64(t.Reasoning), cost, usd, i64(g.UnpricedRequests)})
	}
	cw.Flush()
	return cw.Error()
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }
