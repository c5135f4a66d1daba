package console

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/breaker"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/units"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// keys lists the virtual keys, filtered by q (name, id or prefix).
func (c *Console) keys(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.renderKeys(w, r, v, http.StatusOK, map[string]any{})
}

// A user who is not an operator sees and makes their own keys only.
func (c *Console) renderKeys(w http.ResponseWriter, r *http.Request, v *viewer, status int, data map[string]any) {
	l, err := c.svc().Keys(r.Context())
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	var shown []admin.KeyView
	for _, k := range l.Data {
		if !v.ownsKey(k) {
			continue
		}
		if q == "" || strings.Contains(strings.ToLower(k.Name), q) || strings.Contains(k.ID, q) || strings.HasPrefix(k.Prefix, q) {
			shown = append(shown, k)
		}
	}
	if v.member() {
		data["Rules"] = c.memberRules(r.Context(), v.User)
	}
	data["Keys"], data["Q"], data["Now"] = shown, q, c.o.Now()
	c.render(w, r, status, "keys", v, data)
}

// keyFields reads the key form: what is filled in is set.
func (c *Console) keyFields(r *http.Request) (name string, models []string, expires string, own limit.Limits, err error) {
	f := r.PostForm
	name, models, expires = strings.TrimSpace(f.Get("name")), splitList(f.Get("models")), strings.TrimSpace(f.Get("expires"))
	own, err = formLimits(f.Get, "")
	return name, models, expires, own, err
}

// formLimits reads one set of limits from form fields named by get
// (rpm, tpm, max_parallel, budget_usd, budget_period); at names the set
// in an error ("" for the key's own).
func formLimits(get func(string) string, at string) (l limit.Limits, err error) {
	for _, x := range []struct {
		field string
		dst   *int64
	}{{"rpm", &l.RPM}, {"tpm", &l.TPM}, {"max_parallel", &l.MaxParallel}} {
		if s := strings.TrimSpace(get(x.field)); s != "" {
			n, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil || n < 0 {
				return l, fieldError(at+x.field, "want a whole number, such as 60 (0 or empty: no limit)")
			}
			*x.dst = n
		}
	}
	if s := strings.TrimSpace(get("budget_usd")); s != "" {
		u, perr := limit.ParseUSD(s)
		if perr != nil {
			return l, fieldError(at+"budget_usd", "want an amount of USD, such as 25 or 2.50")
		}
		l.BudgetUSD = u
		l.BudgetPeriod = limit.Period(strings.TrimSpace(get("budget_period")))
	}
	if verr := l.Validate(); verr != nil {
		if at != "" {
			return l, fieldError(strings.TrimSuffix(at, " "), verr.Error())
		}
		return l, verr
	}
	return l, nil
}

// modelLimits reads the key form's per-model rows (ml_model, ml_rpm, …,
// one value per row): a row without a model or without a limit is left
// out, so clearing a row's fields removes its limits.
func modelLimits(f url.Values) (map[string]limit.Limits, error) {
	out := map[string]limit.Limits{}
	for i, m := range f["ml_model"] {
		m = strings.TrimSpace(m)
		get := func(field string) string {
			if v := f["ml_"+field]; i < len(v) {
				return v[i]
			}
			return ""
		}
		l, err := formLimits(get, "model "+cmpOr(m, strconv.Itoa(i+1))+" ")
		if err != nil {
			return nil, err
		}
		if m == "" || l.IsZero() {
			continue
		}
		if _, dup := out[m]; dup {
			return nil, fieldError("model "+m, "is listed twice")
		}
		out[m] = l
	}
	return out, nil
}

type formError struct{ field, msg string }

func (e *formError) Error() string { return e.field + ": " + e.msg }

func fieldError(field, msg string) error { return &formError{field, msg} }

// expiry reads the lifetime field: "" keeps, "never" removes, 720h or 30d
// sets one from now.
func (c *Console) expiry(s string) (set bool, at *time.Time, err error) {
	switch s {
	case "":
		return false, nil, nil
	case "never":
		return true, nil, nil
	}
	d, perr := units.ParseDuration(s)
	if perr != nil || d <= 0 {
		return false, nil, fieldError("expires", "want a lifetime such as 720h or 30d, or never")
	}
	t := c.o.Now().Add(d).UTC().Truncate(time.Millisecond)
	return true, &t, nil
}

// createKey makes a key. A member's is theirs, charged to their primary
// team, and within what they may use (memberRules).
func (c *Console) createKey(w http.ResponseWriter, r *http.Request, v *viewer) {
	name, models, expires, own, err := c.keyFields(r)
	var rules memberRules
	if err == nil && v.member() {
		rules = c.memberRules(r.Context(), v.User)
		models, own, err = rules.apply(models, own)
	}
	var at *time.Time
	if err == nil {
		_, at, err = c.expiry(expires)
	}
	if err == nil {
		req := admin.CreateKey{Name: name, Models: models, ExpiresAt: at}
		if !own.IsZero() {
			req.Limits = &own
		}
		if v.member() {
			req.UserID, req.TeamID = v.User.ID, rules.TeamID
		}
		var k admin.KeyView
		if k, err = c.svc().CreateKey(r.Context(), req); err == nil {
			c.o.Logger.Info("console: key created", "key_id", k.ID)
			// The secret is in this answer only: never in a URL, never again.
			c.renderKeys(w, r, v, http.StatusCreated, map[string]any{"Created": k})
			return
		}
	}
	c.renderKeys(w, r, v, http.StatusBadRequest, map[string]any{"Error": errorText(err), "Form": r.PostForm})
}

// ownKey returns the key of the page's id when v may see it: any for an
// operator, their own for a user; another's is not found, exactly like
// a missing one.
func (c *Console) ownKey(w http.ResponseWriter, r *http.Request, v *viewer) (admin.KeyView, bool) {
	k, err := c.svc().Key(r.Context(), r.PathValue("id"))
	if err != nil || !v.ownsKey(k) {
		c.fail(w, r, v, http.StatusNotFound, "There is no such key.")
		return admin.KeyView{}, false
	}
	return k, true
}

func errorText(err error) string {
	if ae, ok := err.(*admin.Error); ok {
		return ae.Message
	}
	return err.Error()
}

func (c *Console) keyForm(w http.ResponseWriter, r *http.Request, v *viewer) {
	k, ok := c.ownKey(w, r, v)
	if !ok {
		return
	}
	q := r.URL.Query()
	c.renderKey(w, r, v, http.StatusOK, k, map[string]any{"Saved": q.Has("saved"), "Revoked": q.Has("revoked")})
}

// periods are the budget periods the key form offers; a key's own, if
// another, is offered too.
var periods = []string{"total", "daily", "monthly", "24h", "7d", "30d"}

// modelRow is one row of the key form's per-model limits.
type modelRow struct {
	Model  string
	Limits limit.Limits
}

// renderKey shows a key: its settings, what it spent (today, this month,
// in all, and in its budget's current period when it has a budget), and
// the form that edits it, with its per-model limits and a free row.
func (c *Console) renderKey(w http.ResponseWriter, r *http.Request, v *viewer, status int, k admin.KeyView, data map[string]any) {
	data["Title"], data["Key"], data["Limits"] = "Key "+k.Name, k, cmpOr(k.LimitsText(), "none")
	ps := periods
	for _, l := range append([]limit.Limits{k.Limits}, slices.Collect(maps.Values(k.ModelLimits))...) {
		if p := string(l.BudgetPeriod); p != "" && !slices.Contains(ps, p) {
			ps = append(slices.Clip(ps), p)
		}
	}
	data["Periods"] = ps
	rows := make([]modelRow, 0, len(k.ModelLimits)+1)
	for m, l := range k.ModelLimits {
		rows = append(rows, modelRow{m, l})
	}
	slices.SortFunc(rows, func(a, b modelRow) int { return strings.Compare(a.Model, b.Model) })
	data["ModelRows"] = append(rows, modelRow{})
	now := c.o.Now().UTC()
	y, mo, d := now.Date()
	spent := []struct {
		What  string
		Since time.Time
	}{{"today (UTC)", time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)}, {"this month (UTC)", time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)}, {"in all", time.Unix(0, 0).UTC()}}
	var spend [][2]string
	for _, s := range spent {
		rep, err := c.svc().Usage(r.Context(), admin.UsageQuery{Since: s.Since, Until: now.Add(time.Second), GroupBy: store.ByKey, KeyID: k.ID})
		if err != nil {
			c.o.Logger.Warn("console: reading a key's spend", "key", k.ID, "error", err)
			spend = append(spend, [2]string{s.What, "not known now"})
			continue
		}
		spend = append(spend, [2]string{s.What, usdPtr(rep.Total.CostNanoUSD, rep.Total.UnpricedRequests) + " in " + num(rep.Total.Requests) + " requests"})
	}
	if c.o.LimitUse != nil && k.Limits.BudgetUSD != nil {
		if uses, err := c.o.LimitUse(r.Context(), k); err == nil {
			for _, u := range limitUses(k.ID, uses) {
				if u.What == "budget" && u.Model == "" {
					spend = append(spend, [2]string{"of the budget", u.Used + " of " + u.Limit})
				}
			}
		}
	}
	data["Spend"] = spend
	c.render(w, r, status, "key", v, data)
}

func (c *Console) updateKey(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	k, err := c.svc().Key(r.Context(), id)
	if err != nil {
		c.fail(w, r, v, http.StatusNotFound, "There is no such key.")
		return
	}
	name, models, expires, own, err := c.keyFields(r)
	var p admin.KeyPatch
	if err == nil {
		var set bool
		var at *time.Time
		if set, at, err = c.expiry(expires); set {
			p.ExpiresAt = &at
		}
	}
	if err == nil {
		if name != "" {
			p.Name = &name
		}
		if r.PostForm.Has("models") {
			if models == nil {
				models = []string{}
			}
			p.Models = &models
		}
		if r.PostForm.Has("rpm") { // the limits fieldset was sent: it replaces the key's own limits
			p.Limits = &own
		}
		if r.PostForm.Has("ml_model") { // so do the per-model rows, the key's per-model limits
			var per map[string]limit.Limits
			if per, err = modelLimits(r.PostForm); err != nil {
				c.renderKey(w, r, v, http.StatusBadRequest, k, map[string]any{"Error": errorText(err)})
				return
			}
			p.ModelLimits = &per
		}
		if k, err = c.svc().UpdateKey(r.Context(), id, p); err == nil {
			c.o.Logger.Info("console: key updated", "key_id", id)
			http.Redirect(w, r, "/console/keys/"+id+"?saved=1", http.StatusSeeOther)
			return
		}
	}
	c.renderKey(w, r, v, http.StatusBadRequest, k, map[string]any{"Error": errorText(err)})
}

// revokeKey revokes a key once its form's confirmation box is ticked, and
// ends the key's console sessions.
func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, v *viewer) {
	k, ok := c.ownKey(w, r, v)
	if !ok {
		return
	}
	id := k.ID
	if r.PostForm.Get("confirm") != "yes" {
		c.renderKey(w, r, v, http.StatusBadRequest, k, map[string]any{"Error": "Tick the box to confirm: a revoked key cannot be restored."})
		return
	}
	if _, err := c.svc().RevokeKey(r.Context(), id); err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	c.o.Store.DeleteKeySessions(r.Context(), id)
	c.o.Logger.Info("console: key revoked", "key_id", id)
	http.Redirect(w, r, "/console/keys/"+id+"?revoked=1", http.StatusSeeOther)
}

// routes shows the models, their targets, prices and breakers, and each
// target's failed attempts over the last hour: a target that failed
// before another answered counts its failures, not "no requests".
func (c *Console) routes(w http.ResponseWriter, r *http.Request, v *viewer) {
	now := c.o.Now()
	counts, err := c.o.Store.TargetAttempts(r.Context(), now.Add(-time.Hour), now.Add(time.Second))
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	rates := map[string]string{}
	for name, n := range counts {
		rates[name] = pctText(ratio(n.Failures, n.Attempts)) + " of " + num(n.Attempts)
	}
	type target struct {
		Name, Weight, Priority, Input, Output, Breaker, Recent, ErrorRate string
		Fallback, Open                                                    bool
	}
	type model struct {
		Name    string
		Aliases []string
		Targets []target
	}
	var models []model
	for _, m := range c.o.Routes().Models() {
		mm := model{Name: m.Name, Aliases: m.Aliases}
		for _, t := range m.Targets {
			tt := target{Name: t.Name, Weight: i64(int64(t.Weight)), Priority: i64(int64(t.Priority)), Input: "unpriced", Output: "unpriced",
				Breaker: t.Breaker.State().String(), Open: t.Breaker.State() != breaker.Closed, ErrorRate: cmpOr(rates[t.Name], "no requests"),
				Recent: "no requests"}
			if ok, fails := t.Breaker.Recent(); ok+fails > 0 {
				tt.Recent = pctText(ratio(int64(fails), int64(ok+fails))) + " of " + num(int64(ok+fails))
			}
			if t.Priority >= 1<<20 {
				tt.Fallback, tt.Priority = true, i64(int64(t.Priority-1<<20))
			}
			if t.Prices != nil {
				tt.Input, tt.Output = "$"+t.Prices.Input.String(), "$"+t.Prices.Output.String()
			}
			mm.Targets = append(mm.Targets, tt)
		}
		models = append(models, mm)
	}
	c.render(w, r, http.StatusOK, "routes", v, map[string]any{"Models": models, "Refresh": 15})
}

func pctText(v float64) string { return funcs["pct"].(func(float64) string)(v) }
