package console

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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
