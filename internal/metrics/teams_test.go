package metrics

import (
	"fmt"
	"testing"
)

// The team label takes the first teams seen, then "other": a scrape stays
// bounded however many teams there are.
func TestTeamLabelIsBounded(t *testing.T) {
	r := New()
	q := r.Requests()
	for i := range maxTeamLabels + 50 {
		q.Observe(Request{Model: "m", Provider: "p", Status: 200, Input: 1, Person: true, Team: fmt.Sprint("t", i)})
	}
	q.Observe(Request{Model: "m", Provider: "p", Status: 429, Person: true})
	q.Observe(Request{Model: "m", Provider: "p", Status: 200}) // a key no user owns: not counted by team
	families, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "tollgate_team_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var team, class string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "team":
					team = l.GetValue()
				case "class":
					class = l.GetValue()
				}
			}
			series[team+"/"+class] = m.GetCounter().GetValue()
		}
	}
	if len(series) != maxTeamLabels+2 {
		t.Errorf("%d series, want %d teams, other and none", len(series), maxTeamLabels+2)
	}
	if v := series["other/2xx"]; v != 50 {
		t.Errorf("other: %v, want 50", v)
	}
	if v := series["none/4xx"]; v != 1 {
		t.Errorf("none/4xx: %v, want 1", v)
	}
}
