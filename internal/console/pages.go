package console

import (
	"cmp"
	"encoding/csv"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/limiter"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/units"
)

// windows are the overview's choices, each with the width of a chart bar.
var windows = []struct {
	Name         string
	Span, Bucket time.Duration
}{
	{"1h", time.Hour, 5 * time.Minute},
	{"24h", 24 * time.Hour, time.Hour},
	{"7d", 7 * 24 * time.Hour, 6 * time.Hour},
	{"30d", 30 * 24 * time.Hour, 24 * time.Hour},
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, v *viewer) {
	win := windows[1]
	for _, x := range windows {
		if x.Name == r.URL.Query().Get("window") {
			win = x
		}
	}
	now := c.o.Now()
	until := now.Truncate(win.Bucket).Add(win.Bucket) // the bars end with the current one
	since := until.Add(-win.Span)
	ctx := r.Context()
	own := v.own()
	rep, err := c.usageOf(ctx, since, until, store.ByModel, own)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	// The ledger's timings are sampled by key: a user's own are not
	// told apart from everyone's, so a user sees none.
	var t store.Timings
	if own.UserID == "" {
		if t, err = c.o.Store.Timings(ctx, own.KeyID, since, until); err != nil {
			c.storeFailed(w, r, v, err)
			return
		}
	}
	// Bars over time, split by model: one usage query per bar, each over
	// a short span (and, for whole hours, answered from roll-ups).
	var bars []bar
	for at := since; at.Before(until); at = at.Add(win.Bucket) {
		b, err := c.usageOf(ctx, at, at.Add(win.Bucket), store.ByModel, own)
		if err != nil {
			c.storeFailed(w, r, v, err)
			return
		}
		bars = append(bars, bar{Start: at, Groups: b.Data})
	}
	tot := rep.Total
	in := tot.Tokens.Input + tot.Tokens.CacheRead + tot.Tokens.CacheWrite5m + tot.Tokens.CacheWrite1h
	saved, savedKnown := c.cacheSavings(rep.Data)
	data := map[string]any{
		"Refresh": 30, "Windows": windows, "Window": win.Name, "Since": since, "Until": until, "Total": tot,
		"ErrorRate": ratio(tot.Errors, tot.Requests), "CacheHit": ratio(tot.Tokens.CacheRead, in),
		"Saved": saved, "SavedKnown": savedKnown, "Models": rep.Data,
		"P50": store.Percentile(t.Latency, .5), "P95": store.Percentile(t.Latency, .95),
		"TTFB50": store.Percentile(t.TTFB, .5), "TTFB95": store.Percentile(t.TTFB, .95),
		"Over50": store.Percentile(t.Overhead, .5), "Over95": store.Percentile(t.Overhead, .95),
		"Sampled": len(t.Latency), "Timings": own.UserID == "",
	}
	m := pickMeasure(r.URL.Query().Get("measure"), tot)
	data["Measures"], data["Measure"] = measures, m.Name
	data["Chart"] = chartSVG(bars, win.Bucket, m)
	c.render(w, r, http.StatusOK, "overview", v, data)
}

// cacheSavings is what prompt-cache reads saved against paying for the
// same tokens as fresh input, at each model's prices (its first target's);
// known is false when a model with cache reads has no price.
func (c *Console) cacheSavings(groups []admin.UsageGroup) (nano int64, known bool) {
	known = true
	rt := c.o.Routes()
	for _, g := range groups {
		if g.Tokens.CacheRead == 0 {
			continue
		}
		m := rt.Lookup([]byte(g.Group))
		if m == nil || len(m.Targets) == 0 || m.Targets[0].Prices == nil {
			known = false
			continue
		}
		p := m.Targets[0].Prices
		fresh, err1 := p.Cost(meter.Usage{Input: g.Tokens.CacheRead})
		cached, err2 := p.Cost(meter.Usage{CacheRead: g.Tokens.CacheRead})
		if err1 != nil || err2 != nil {
			known = false
			continue
		}
		nano += fresh - cached
	}
	return nano, known
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// usageParams reads the usage page's range and grouping.
type usageParams struct {
	Since, Until time.Time
	SinceText    string
	UntilText    string
	By           store.GroupBy
	Measure      string // what the chart counts: requests, tokens or cost ("" picks)
	// User and Team narrow an operator's view to one user's or team's
	// records (ids); Scope is what the page reads.
	User, Team string
	Scope      scope
}

func (c *Console) usageParams(r *http.Request, v *viewer) (usageParams, error) {
	q := r.URL.Query()
	now := c.o.Now()
	p := usageParams{SinceText: cmp.Or(q.Get("since"), "7d"), UntilText: q.Get("until"), By: store.GroupBy(cmp.Or(q.Get("by"), "model")), Until: now,
		Measure: q.Get("measure"), Scope: v.own()}
	if v.operator() {
		p.User, p.Team = strings.TrimSpace(q.Get("user")), strings.TrimSpace(q.Get("team"))
		p.Scope.UserID, p.Scope.TeamID = p.User, p.Team
	}
	var err error
	if p.Since, err = parseWhen(p.SinceText, now); err != nil {
		return p, errors.New("from: " + err.Error())
	}
	if p.UntilText != "" {
		if p.Until, err = parseWhen(p.UntilText, now); err != nil {
			return p, errors.New("to: " + err.Error())
		}
	}
	allowed := []store.GroupBy{store.ByModel, store.ByDay}
	switch {
	case v.operator():
		allowed = append(allowed, store.ByKey, store.ByProvider, store.ByEndpoint, store.ByUser, store.ByTeam)
	case v.User != nil:
		allowed = append(allowed, store.ByKey) // their own keys
	}
	if !slices.Contains(allowed, p.By) {
		return p, errors.New("group by: not a grouping you can use")
	}
	if !p.Since.Before(p.Until) {
		return p, errors.New("from must come before to")
	}
	return p, nil
}

// parseWhen reads "7d" or "24h" (that long ago), a date (2026-11-01) or
// an RFC 3339 time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if d, err := units.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("want a duration ago (24h, 7d), a date (2026-11-01) or an RFC 3339 time")
}

func (c *Console) usage(w http.ResponseWriter, r *http.Request, v *viewer) {
	p, err := c.usageParams(r, v)
	data := map[string]any{"Params": p, "Master": v.operator(), "Member": v.User != nil && !v.operator()}
	if err != nil {
		data["Error"] = err.Error()
		c.render(w, r, http.StatusBadRequest, "usage", v, data)
		return
	}
	rep, err := c.usageOf(r.Context(), p.Since, p.Until, p.By, p.Scope)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	names := c.groupNames(r, v, p.By)
	rows := make([]usageRow, len(rep.Data))
	for i, g := range rep.Data {
		rows[i] = usageRow{UsageGroup: g, Label: label(g.Group, p.By, names)}
	}
	if len(rows) > maxUsageRows {
		// The largest groups, largest first; the CSV has every one.
		m := pickMeasure(p.Measure, rep.Total)
		slices.SortStableFunc(rows, func(a, b usageRow) int { return cmp.Compare(m.value(b.UsageGroup), m.value(a.UsageGroup)) })
		data["Shown"], data["Groups"] = maxUsageRows, len(rows)
		rows = rows[:maxUsageRows]
	}
	data["Rows"], data["Total"] = rows, rep.Total
	m := pickMeasure(p.Measure, rep.Total)
	data["Measures"], data["Measure"] = measures, m.Name
	data["Chart"] = groupsSVG(rows, m)
	data["CSV"] = "/console/usage.csv?" + r.URL.RawQuery
	c.render(w, r, http.StatusOK, "usage", v, data)
}

// maxUsageRows is the most groups the usage page lists (the CSV lists
// all): a thousand keys would make a page of some 250 KB.
const maxUsageRows = 100

type usageRow struct {
	admin.UsageGroup
	Label string
}

// groupNames maps the ids of keys, users or teams to their names, for
// grouping by one of them; a member sees the names of their own keys.
func (c *Console) groupNames(r *http.Request, v *viewer, by store.GroupBy) map[string]string {
	ctx := r.Context()
	m := map[string]string{}
	switch {
	case by == store.ByKey && (v.operator() || v.User != nil):
		l, err := c.svc().Keys(ctx)
		if err != nil {
			return nil
		}
		for _, k := range l.Data {
			if v.ownsKey(k) {
				m[k.ID] = k.Name
			}
		}
	case by == store.ByUser && v.operator():
		m, _ = c.userNames(ctx)
	case by == store.ByTeam && v.operator():
		m, _ = c.teamNames(ctx)
	}
	return m
}

func label(group string, by store.GroupBy, names map[string]string) string {
	switch {
	case by == store.ByKey && group == "":
		return "(master key)"
	case (by == store.ByUser || by == store.ByTeam) && group == "":
		return "(none)"
	case names[group] != "" && (by == store.ByKey || by == store.ByUser || by == store.ByTeam):
		return names[group] + " (" + group + ")"
	}
	return cmpOr(group, "—")
}

func (c *Console) usageCSV(w http.ResponseWriter, r *http.Request, v *viewer) {
	p, err := c.usageParams(r, v)
	if err != nil {
		c.fail(w, r, v, http.StatusBadRequest, err.Error())
		return
	}
	rep, err := c.usageOf(r.Context(), p.Since, p.Until, p.By, p.Scope)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	names := c.groupNames(r, v, p.By)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="usage-`+string(p.By)+`.csv"`)
	cw := csv.NewWriter(w)
	cw.Write([]string{"group", "name", "requests", "errors", "input", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning", "cost_usd", "unpriced_requests",
		"cache_savings_usd", "cache_savings_unknown_requests"})
	row := func(group, name string, g admin.UsageGroup) {
		cost, saved := "", "" // unknown, never 0
		if g.CostNanoUSD != nil {
			cost = units.FormatNano(*g.CostNanoUSD, 2)
		}
		if g.CacheSavingsNanoUSD != nil {
			saved = units.FormatNano(*g.CacheSavingsNanoUSD, 2)
		}
		t := g.Tokens
		cw.Write([]string{group, name, i64(g.Requests), i64(g.Errors), i64(t.Input), i64(t.CacheRead), i64(t.CacheWrite5m),
			i64(t.CacheWrite1h), i64(t.Output), i64(t.Reasoning), cost, i64(g.UnpricedRequests), saved, i64(g.CacheSavingsUnknownRequests)})
	}
	for _, g := range rep.Data {
		row(g.Group, names[g.Group], g)
	}
	row("TOTAL", "", rep.Total)
	cw.Flush()
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// requests pages the ledger, newest first.
func (c *Console) requests(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	f := store.RequestFilter{KeyID: q.Get("key"), UserID: q.Get("user"), TeamID: q.Get("team"), SessionID: q.Get("session"),
		Model: q.Get("model"), Lane: q.Get("lane"), AfterID: q.Get("after"), Limit: 50}
	switch own := v.own(); {
	case v.operator():
	case own.UserID != "":
		// A member narrows to one of their own keys or sessions, never
		// beyond their own records.
		f.UserID, f.TeamID = own.UserID, ""
	default:
		f.KeyID, f.UserID, f.TeamID, f.SessionID = own.KeyID, "", "", ""
	}
	data := map[string]any{"Key": f.KeyID, "User": f.UserID, "Team": f.TeamID, "Session": f.SessionID, "Model": f.Model,
		"Status": q.Get("status"), "Lane": f.Lane, "Lanes": laneChoices, "Since": q.Get("since"), "Master": v.operator(),
		"People": v.KeyID == "", "Refresh": 30}
	if f.Lane != "" && !slices.Contains(store.Lanes, f.Lane) {
		data["Error"] = "lane: choose pass-through, translated or none"
		c.render(w, r, http.StatusBadRequest, "requests", v, data)
		return
	}
	if s := q.Get("status"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			data["Error"] = "status: want an HTTP status such as 200 or 429"
			c.render(w, r, http.StatusBadRequest, "requests", v, data)
			return
		}
		f.Status = n
	}
	if s := q.Get("since"); s != "" {
		t, err := parseWhen(s, c.o.Now())
		if err != nil {
			data["Error"] = "since: " + err.Error()
			c.render(w, r, http.StatusBadRequest, "requests", v, data)
			return
		}
		f.Since = t
	}
	page := f
	page.Limit++
	recs, err := c.o.Store.Requests(r.Context(), page)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	if len(recs) > f.Limit {
		recs = recs[:f.Limit]
		next := url.Values{}
		for k, vs := range q {
			next[k] = vs
		}
		next.Set("after", recs[len(recs)-1].ID)
		data["Next"] = "/console/requests?" + next.Encode()
	}
	data["Records"] = recs
	c.render(w, r, http.StatusOK, "requests", v, data)
}

// laneChoices are the Requests page's lane filter: value and label.
var laneChoices = [][2]string{{"", "any"}, {"passthrough", "pass-through"}, {"translated", "translated"}, {store.NoLane, "none (no upstream)"}}

// request shows one record and its attempts; a virtual key sees only its
// own, and another's is not found, exactly like a missing one.
func (c *Console) request(w http.ResponseWriter, r *http.Request, v *viewer) {
	rec, err := c.o.Store.RequestByID(r.Context(), r.PathValue("id"))
	if err != nil || !v.owns(rec.KeyID, rec.UserID) {
		c.fail(w, r, v, http.StatusNotFound, "There is no such request.")
		return
	}
	c.render(w, r, http.StatusOK, "request", v, map[string]any{"Title": "Request " + rec.ID, "R": rec, "Attempts": attempts(rec.Attempts)})
}

// limitsPage is how many keys the limits page shows at once: each key's
// live use is one read of the counters (and of the ledger, for a budget
// no request loaded since the last start).
const limitsPage = 50

// limits shows each key's limits, their live use, and what it spent
// today and this month.
func (c *Console) limits(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	l, err := c.svc().Keys(ctx)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	keys := make([]admin.KeyView, 0, len(l.Data))
	for _, k := range l.Data {
		if !k.Revoked && v.ownsKey(k) {
			keys = append(keys, k)
		}
	}
	data := map[string]any{"Refresh": 30, "Keys": len(keys)}
	if v.member() {
		data["Rules"] = c.memberRules(ctx, v.User)
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	from = min(max(from, 0), len(keys))
	if from+limitsPage < len(keys) {
		data["Next"] = "/console/limits?from=" + strconv.Itoa(from+limitsPage)
	}
	if from > 0 {
		data["Prev"] = "/console/limits?from=" + strconv.Itoa(max(from-limitsPage, 0))
	}
	keys = keys[from:min(from+limitsPage, len(keys))]
	now := c.o.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	spent := func(since time.Time) map[string]admin.UsageGroup {
		rep, err := c.usageOf(ctx, since, now.Add(time.Second), store.ByKey, v.own())
		m := map[string]admin.UsageGroup{}
		if err == nil {
			for _, g := range rep.Data {
				m[g.Group] = g
			}
		}
		return m
	}
	today, thisMonth := spent(day), spent(month)
	type row struct {
		Key          admin.KeyView
		Limits       string
		Use          []limitUse
		UseError     bool
		Today, Month admin.UsageGroup
	}
	rows := make([]row, 0, len(keys))
	for _, k := range keys {
		rw := row{Key: k, Limits: cmpOr(k.LimitsText(), "none"), Today: today[k.ID], Month: thisMonth[k.ID]}
		if c.o.LimitUse != nil {
			uses, err := c.o.LimitUse(ctx, k)
			if err != nil {
				c.o.Logger.Warn("console: reading the limits' use", "key", k.ID, "error", err)
				rw.UseError = true
			}
			rw.Use = limitUses(k.ID, uses)
		}
		rows = append(rows, rw)
	}
	data["Rows"] = rows
	c.render(w, r, http.StatusOK, "limits", v, data)
}

// limitUse is one limit's live use, as the limits page shows it.
type limitUse struct {
	Model      string // "" for the key's own limits
	What       string // rpm, tpm, parallel, budget
	Used       string
	Limit      string
	Value, Max int64 // for the meter
	FromLedger bool
}

func limitUses(keyID string, uses []limiter.Use) []limitUse {
	out := make([]limitUse, 0, len(uses))
	for _, u := range uses {
		lu := limitUse{Model: strings.TrimPrefix(strings.TrimPrefix(u.Scope, "key:"+keyID), ":model:"),
			Used: num(u.Used), Limit: num(u.Limit), Value: min(u.Used, u.Limit), Max: u.Limit, FromLedger: u.FromLedger}
		switch u.What {
		case limiter.Requests:
			lu.What = "rpm"
		case limiter.Tokens:
			lu.What = "tpm"
		case limiter.Parallel:
			lu.What = "parallel"
		case limiter.Budget:
			lu.What = "budget"
			lu.Used, lu.Limit = usd(u.Used), usd(u.Limit)
		}
		out = append(out, lu)
	}
	return out
}

// storeFailed answers a page whose data could not be read.
func (c *Console) storeFailed(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	var ae *admin.Error
	if errors.As(err, &ae) && ae.Status < 500 {
		c.fail(w, r, v, ae.Status, ae.Message)
		return
	}
	c.o.Logger.Error("console: reading data", "path", r.URL.Path, "error", err)
	c.fail(w, r, v, http.StatusServiceUnavailable, "The data could not be read now; try again.")
}

// attempt is one upstream attempt of a record.
type attempt struct {
	Target string  `json:"target"`
	Status int     `json:"status"`
	Error  string  `json:"error"`
	MS     float64 `json:"ms"`
}

func attempts(js string) []attempt {
	var out []attempt
	if js == "" {
		return nil
	}
	if err := jsonUnmarshal([]byte(js), &out); err != nil {
		return nil
	}
	return out
}

// splitList reads a comma-separated form field.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
