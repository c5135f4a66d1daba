package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// The key page edits the key's limits per model (rows added, changed and
// removed), offers the budget periods as a choice, and shows what the
// key spent.
func TestKeyPageModelLimitsAndSpend(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := storetest.Open(t)["sqlite"]
	svc := func() *admin.Service { return admin.New(s, nil, nil, nil) }
	c, err := New(Options{Admin: svc, Store: s, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k, err := svc().CreateKey(ctx, admin.CreateKey{Name: "app"})
	if err != nil {
		t.Fatal(err)
	}
	cost := int64(1_250_000_000) // $1.25
	if err := s.InsertRequests(ctx, []store.Request{{ID: "req_1", Time: now.Add(-time.Hour), KeyID: k.ID, ClientProtocol: "openai",
		Endpoint: "/v1/chat/completions", Model: "m", CanonicalModel: "m", Provider: "p", Lane: "passthrough", Status: 200, Input: 10, CostNanoUSD: &cost}}); err != nil {
		t.Fatal(err)
	}
	post := func(form url.Values) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/console/keys/"+k.ID, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.ParseForm()
		r.SetPathValue("id", k.ID)
		w := httptest.NewRecorder()
		c.updateKey(w, r, &viewer{Master: true})
		return w
	}
	form := url.Values{"rpm": {""}, "budget_usd": {"10"}, "budget_period": {"monthly"},
		"ml_model": {"gpt-a", "claude-b", ""}, "ml_rpm": {"5", "", ""}, "ml_tpm": {"", "1000", ""}, "ml_max_parallel": {"", "", ""},
		"ml_budget_usd": {"", "2.50", ""}, "ml_budget_period": {"total", "7d", "total"}}
	if w := post(form); w.Code != http.StatusSeeOther {
		t.Fatalf("saving: %d %s", w.Code, w.Body)
	}
	got, _ := svc().Key(ctx, k.ID)
	if got.Limits.BudgetPeriod != "monthly" || got.ModelLimits["gpt-a"].RPM != 5 || got.ModelLimits["claude-b"].TPM != 1000 ||
		got.ModelLimits["claude-b"].BudgetPeriod != "7d" || len(got.ModelLimits) != 2 {
		t.Fatalf("after saving: %+v %+v", got.Limits, got.ModelLimits)
	}

	// Clearing a row's limits removes the model's; a bad value names the row.
	form["ml_rpm"] = []string{"", "", ""}
	if w := post(form); w.Code != http.StatusSeeOther {
		t.Fatalf("saving: %d", w.Code)
	}
	if got, _ = svc().Key(ctx, k.ID); len(got.ModelLimits) != 1 || got.ModelLimits["claude-b"].TPM != 1000 {
		t.Fatalf("after clearing gpt-a: %+v", got.ModelLimits)
	}
	form["ml_tpm"] = []string{"", "lots", ""}
	if w := post(form); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "model claude-b tpm: want a whole number") {
		t.Fatalf("a bad value: %d %s", w.Code, w.Body)
	}

	// The page: the period chosen, the model rows and a free one, the spend.
	r := httptest.NewRequest("GET", "/console/keys/"+k.ID, nil)
	r.SetPathValue("id", k.ID)
	w := httptest.NewRecorder()
	c.keyForm(w, r, &viewer{Master: true})
	page := w.Body.String()
	for _, want := range []string{`<option value="monthly" selected>monthly</option>`, `value="claude-b"`, `placeholder="add a model"`,
		`<option value="7d" selected>7d</option>`, "Spent today (UTC)</dt><dd>$1.25 in 1 requests", "Spent in all</dt><dd>$1.25"} {
		if !strings.Contains(page, want) {
			t.Errorf("the key page lacks %q", want)
		}
	}
	if limit.Period("monthly") != got.Limits.BudgetPeriod {
		t.Errorf("the key's period: %q", got.Limits.BudgetPeriod)
	}
}
