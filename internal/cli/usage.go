package cli

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/units"
)

func usageCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("usage", stderr)
	bf := addBackendFlags(fs)
	since := fs.String("since", "24h", "start: a duration ago (24h, 7d), a date or an RFC 3339 time")
	until := fs.String("until", "", "end (exclusive), in the same forms (default: now)")
	by := fs.String("by", "model", "group by model, key, day (UTC), provider, user, team, session (agent sessions) or endpoint (/v1/embeddings, …)")
	key := fs.String("key", "", "only this key's requests (its name or ID)")
	user := fs.String("user", "", "only this user's requests (their ID, subject or email)")
	team := fs.String("team", "", "only the requests charged to this team (its ID or name)")
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
	ctx := context.Background()
	var names keyNames // the keys' names, when the output needs them
	var keyID string
	if *key != "" || store.GroupBy(*by) == store.ByKey {
		list, err := b.Keys(ctx)
		if err != nil {
			return err
		}
		names = newKeyNames(list.Data)
	}
	if *key != "" {
		if keyID, err = names.resolve(*key); err != nil {
			return fmt.Errorf("usage: --key %q: %w in %s", *key, err, databaseName(bf))
		}
	}
	q := admin.UsageQuery{Since: s, Until: u, GroupBy: store.GroupBy(*by), KeyID: keyID}
	if *user != "" {
		if q.UserID, err = resolveUser(ctx, b, *user); err != nil {
			return fmt.Errorf("usage: --user %q: %w", *user, err)
		}
	}
	if *team != "" {
		if q.TeamID, err = resolveTeam(ctx, b, *team); err != nil {
			return fmt.Errorf("usage: --team %q: %w", *team, err)
		}
	}
	rep, err := b.Usage(ctx, q)
	if err != nil {
		return err
	}
	if err := names.addPeople(ctx, b, q.GroupBy); err != nil {
		return err
	}
	if rep.GroupBy == string(store.ByKey) {
		// By name, as the keys are shown, rather than by id.
		slices.SortStableFunc(rep.Data, func(a, b admin.UsageGroup) int {
			if a.Group == "" || b.Group == "" {
				return cmp.Compare(a.Group, b.Group) // "", the master key, first
			}
			return cmp.Compare(names.label(a.Group), names.label(b.Group))
		})
	}
	switch *format {
	case "json":
		if rep.GroupBy == string(store.ByKey) {
			return printJSON(stdout, names.report(rep))
		}
		return printJSON(stdout, rep)
	case "csv":
		return usageCSV(stdout, rep, names)
	}
	var of []string
	if keyID != "" {
		of = append(of, "key "+names.label(keyID))
	}
	if q.UserID != "" {
		of = append(of, "user "+*user)
	}
	if q.TeamID != "" {
		of = append(of, "team "+*team)
	}
	return usageTable(stdout, rep, names, strings.Join(of, ", "))
}

// keyNames names keys by id, for usage by key and --key.
type keyNames struct {
	byID   map[string]admin.KeyView
	byName map[string][]admin.KeyView
	// people labels the groups of usage by user (subjects) and by team
	// (names).
	people map[string]string
}

// addPeople reads the labels of usage by user or by team.
func (n *keyNames) addPeople(ctx context.Context, b backend, by store.GroupBy) error {
	n.people = map[string]string{}
	switch by {
	case store.ByUser:
		l, err := b.Users(ctx, admin.UserQuery{})
		if err != nil {
			return err
		}
		for _, u := range l.Data {
			n.people[u.ID] = u.Subject
		}
	case store.ByTeam:
		l, err := b.Teams(ctx)
		if err != nil {
			return err
		}
		for _, t := range l.Data {
			n.people[t.ID] = t.Name
		}
	}
	return nil
}

func newKeyNames(keys []admin.KeyView) keyNames {
	n := keyNames{byID: map[string]admin.KeyView{}, byName: map[string][]admin.KeyView{}}
	for _, k := range keys {
		n.byID[k.ID] = k
		n.byName[k.Name] = append(n.byName[k.Name], k)
	}
	return n
}

// resolve returns the id of the key whose id, else whose name, is s. A
// name that several keys share is refused rather than guessed.
func (n keyNames) resolve(s string) (string, error) {
	if _, ok := n.byID[s]; ok {
		return s, nil
	}
	switch same := n.byName[s]; len(same) {
	case 0:
		return "", errors.New("no key has this name or ID")
	case 1:
		return same[0].ID, nil
	default:
		ids := make([]string, len(same))
		for i, k := range same {
			ids[i] = k.ID
			if k.Revoked {
				ids[i] += " (revoked)"
			}
		}
		return "", fmt.Errorf("%d keys have this name (%s); pass one's ID", len(same), strings.Join(ids, ", "))
	}
}

// name is the name of the key with this id; ok is false for the master
// key ("") and for an id no listed key has.
func (n keyNames) name(id string) (name string, ok bool) {
	k, ok := n.byID[id]
	return k.Name, ok
}

// label shows a key in a table: its name, with its id when another key
// has the same name (names need not be unique; ids are).
func (n keyNames) label(id string) string {
	name, ok := n.name(id)
	switch {
	case id == "":
		return "(master key)"
	case !ok:
		return id
	case len(n.byName[name]) > 1:
		return name + " (" + id + ")"
	}
	return name
}

// keyUsageReport is usage by key in JSON: the admin API's report, each
// group with its key's name beside its id (group).
type keyUsageReport struct {
	admin.UsageReport
	Data []keyUsageGroup `json:"data"`
}

type keyUsageGroup struct {
	admin.UsageGroup
	KeyName *string `json:"key_name"` // null for the master key and unlisted ids
}

func (n keyNames) report(rep admin.UsageReport) keyUsageReport {
	out := keyUsageReport{UsageReport: rep, Data: make([]keyUsageGroup, len(rep.Data))}
	out.UsageReport.Data = nil // shadowed by out.Data
	for i, g := range rep.Data {
		out.Data[i].UsageGroup = g
		if name, ok := n.name(g.Group); ok {
			out.Data[i].KeyName = &name
		}
	}
	return out
}

// databaseName says which database the backend flags select, for an
// error that found nothing in it: the wrong database is the usual cause.
func databaseName(f backendFlags) string {
	if u := cmp.Or(*f.url, os.Getenv("TOLLGATE_URL")); u != "" {
		return "the database of the gateway at " + config.RedactURL(u)
	}
	cfg, path, err := loadDatabaseConfig(*f.config)
	if err != nil {
		return "the database configured in " + path
	}
	db := config.RedactURL(cfg.Database.URL)
	if p, ok := sqlitePath(cfg.Database.URL); ok {
		if abs, err := filepath.Abs(p); err == nil {
			db = "sqlite://" + abs // a relative path depends on where the command ran
		}
	}
	if path != "" {
		return "the database " + db + " (database.url in " + path + ")"
	}
	return "the database " + db + " (the default: no --config or $TOLLGATE_CONFIG)"
}

// noProvider labels, in the table by provider, the requests that reached
// no provider (refused before routing, or unknown models); the CSV and
// the JSON leave their group empty.
const noProvider = "(no provider)"

// noneOf labels, in the table, the requests of no user, team or agent
// session.
var noneOf = map[string]string{string(store.ByUser): "(no user)", string(store.ByTeam): "(no team)", string(store.BySession): "(no session)",
	string(store.ByEndpoint): "(not recorded)"}

func usageTable(w io.Writer, rep admin.UsageReport, names keyNames, of string) error {
	fmt.Fprintf(w, "Usage from %s to %s, by %s", rep.Since.Format(time.RFC3339), rep.Until.Format(time.RFC3339), rep.GroupBy)
	if of != "" {
		fmt.Fprintf(w, ", of %s", printable(of))
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "GROUP\tREQUESTS\tERRORS\tINPUT\tCACHE READ\tCACHE WRITE 5M\tCACHE WRITE 1H\tOUTPUT\tREASONING\tCOST USD\tCACHE SAVINGS USD\t")
	row := func(g admin.UsageGroup, total bool) {
		group := g.Group
		switch {
		case total:
		case rep.GroupBy == string(store.ByKey):
			group = names.label(group)
		case rep.GroupBy == string(store.ByProvider) && group == "":
			group = noProvider
		case group == "" && noneOf[rep.GroupBy] != "":
			group = noneOf[rep.GroupBy]
		case names.people[group] != "":
			group = names.people[group] + " (" + group + ")"
		}
		t := g.Tokens
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", printable(group), g.Requests, g.Errors, t.Input, t.CacheRead,
			t.CacheWrite5m, t.CacheWrite1h, t.Output, t.Reasoning, costCell(g), savingsCell(g))
	}
	for _, g := range rep.Data {
		row(g, false)
	}
	total := rep.Total
	total.Group = "TOTAL"
	row(total, true)
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
	if n := rep.Total.CacheSavingsUnknownRequests; n > 0 {
		what := "requests have"
		if n == 1 {
			what = "request has"
		}
		fmt.Fprintf(w, "\n† %d %s an unknown cache saving, not in the sums: no price for the cache tokens\n"+
			"  or the input, or recorded before cache savings were.\n", n, what)
	}
	return nil
}

// savingsCell shows what prompt caching saved a group (negative when
// cache writes cost more than cache reads saved), marked when part of it
// is unknown.
func savingsCell(g admin.UsageGroup) string {
	switch {
	case g.CacheSavingsNanoUSD == nil && g.CacheSavingsUnknownRequests > 0:
		return "unknown †"
	case g.CacheSavingsNanoUSD == nil:
		return "0.00"
	case g.CacheSavingsUnknownRequests > 0:
		return formatUSD(*g.CacheSavingsNanoUSD) + " + unknown †"
	}
	return formatUSD(*g.CacheSavingsNanoUSD)
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

// usageCSV writes one row a group; by key, group is the key's id and
// key_name, next to it, its name (empty for the master key).
func usageCSV(w io.Writer, rep admin.UsageReport, names keyNames) error {
	byKey := rep.GroupBy == string(store.ByKey)
	cw := csv.NewWriter(w)
	header := []string{"group", "requests", "errors", "input", "cache_read", "cache_write_5m", "cache_write_1h",
		"output", "reasoning", "cost_nano_usd", "cost_usd", "unpriced_requests",
		"cache_savings_nano_usd", "cache_savings_usd", "cache_savings_unknown_requests"}
	if byKey {
		header = slices.Insert(header, 1, "key_name")
	}
	cw.Write(header)
	for _, g := range rep.Data {
		t := g.Tokens
		cost, usd := "", "" // empty: unknown
		if g.CostNanoUSD != nil {
			cost, usd = strconv.FormatInt(*g.CostNanoUSD, 10), formatUSD(*g.CostNanoUSD)
		}
		saved, savedUSD := "", "" // empty: unknown
		if g.CacheSavingsNanoUSD != nil {
			saved, savedUSD = strconv.FormatInt(*g.CacheSavingsNanoUSD, 10), formatUSD(*g.CacheSavingsNanoUSD)
		}
		rec := []string{g.Group, i64(g.Requests), i64(g.Errors), i64(t.Input), i64(t.CacheRead), i64(t.CacheWrite5m),
			i64(t.CacheWrite1h), i64(t.Output), i64(t.Reasoning), cost, usd, i64(g.UnpricedRequests),
			saved, savedUSD, i64(g.CacheSavingsUnknownRequests)}
		if byKey {
			name, _ := names.name(g.Group)
			rec = slices.Insert(rec, 1, name)
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }
