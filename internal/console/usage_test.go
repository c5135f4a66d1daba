package console

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// TestUsagePageListsTheLargestGroups: past maxUsageRows groups the page
// lists the largest, says how many there are, and totals all of them.
func TestUsagePageListsTheLargestGroups(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := storetest.Open(t)["sqlite"]
	var recs []store.Request
	for i := range 150 {
		cost := int64(1000 * (i + 1))
		recs = append(recs, store.Request{ID: fmt.Sprintf("req_%03d", i), Time: now.Add(-time.Hour), KeyID: fmt.Sprintf("key_%03d", i),
			ClientProtocol: "openai", Endpoint: "/v1/chat/completions", Model: "m", CanonicalModel: "m", Provider: "p",
			Lane: "passthrough", Status: 200, Input: 10, CostNanoUSD: &cost})
	}
	if err := s.InsertRequests(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	rt := &route.Table{}
	c, err := New(Options{Admin: func() *admin.Service { return admin.New(s, rt, nil, nil) }, Store: s,
		Routes: func() *route.Table { return rt }, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	c.usage(w, httptest.NewRequest("GET", "/console/usage?since=1d&by=key", nil), &viewer{Master: true})
	page := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(page, "The 100 largest of 150 groups") {
		t.Fatalf("%d:\n%s", w.Code, page)
	}
	if !strings.Contains(page, "key_149") || !strings.Contains(page, "key_050") || strings.Contains(page, "key_049<") {
		t.Errorf("not the 100 largest keys (key_050 to key_149)")
	}
	if !strings.Contains(page, ">150<") { // the total's requests: every group
		t.Errorf("the total is not of every group")
	}
}

// TestUsagePageShowsCacheSavings: the usage page and its CSV show what
// prompt caching saved each group: positive for cache reads, negative for
// cache writes alone, unknown (never 0) where it is not known.
func TestUsagePageShowsCacheSavings(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := storetest.Open(t)["sqlite"]
	n := func(v int64) *int64 { return &v }
	rec := func(id, model string, read, write int64, saved *int64) store.Request {
		return store.Request{ID: id, Time: now.Add(-time.Hour), ClientProtocol: "anthropic", Endpoint: "/v1/messages", Model: model,
			CanonicalModel: model, Provider: "p", Lane: "passthrough", Status: 200, Input: 10, CacheRead: read, CacheWrite5m: write,
			CostNanoUSD: n(1000), CacheSavingsNano: saved}
	}
	if err := s.InsertRequests(context.Background(), []store.Request{
		rec("req_r", "reader", 1000, 0, n(2_700_000)), rec("req_w", "writer", 0, 1000, n(-750_000)), rec("req_u", "unpriced", 1000, 0, nil),
	}); err != nil {
		t.Fatal(err)
	}
	rt := &route.Table{}
	c, err := New(Options{Admin: func() *admin.Service { return admin.New(s, rt, nil, nil) }, Store: s,
		Routes: func() *route.Table { return rt }, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	c.usage(w, httptest.NewRequest("GET", "/console/usage?since=1d&by=model", nil), &viewer{Master: true})
	page := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(page, ">Cache savings</th>") {
		t.Fatalf("%d:\n%s", w.Code, page)
	}
	q := regexp.QuoteMeta
	for _, want := range []string{
		q(`<td>reader</td>`) + cells(8) + q(`<td class="num">$0.0027</td></tr>`),
		q(`<td>writer</td>`) + cells(8) + q(`<td class="num">-$0.00075</td></tr>`),
		q(`<td>unpriced</td>`) + cells(8) + q(`<td class="num">unknown</td></tr>`),
		q(`<th class="num">$0.00195 &#43; unknown</th></tr>`), // the total ("+" escaped)
	} {
		if !regexp.MustCompile(want).MatchString(page) {
			t.Errorf("no %s in:\n%s", want, page)
		}
	}

	w = httptest.NewRecorder()
	c.usageCSV(w, httptest.NewRequest("GET", "/console/usage.csv?since=1d&by=model", nil), &viewer{Master: true})
	rows, err := csv.NewReader(w.Body).ReadAll()
	if err != nil || len(rows) != 5 {
		t.Fatalf("csv: %v %v", rows, err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r[0]+"="+strings.Join(r[12:], "/"))
	}
	if g := strings.Join(got, " "); g != "group=cache_savings_usd/cache_savings_unknown_requests reader=0.0027/0 unpriced=/1 writer=-0.00075/0 TOTAL=0.00195/1" {
		t.Errorf("csv savings: %s", g)
	}
}

// cells matches n cells of a row, whatever they hold.
func cells(n int) string { return `(<td class="num">[^<]*</td>){` + fmt.Sprint(n) + `}` }
