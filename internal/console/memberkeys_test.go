package console

import (
	"context"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/limit"
)

func TestMemberRulesApply(t *testing.T) {
	ten := limit.NanoUSD(10e9)
	five := limit.NanoUSD(5e9)
	for _, tt := range []struct {
		name       string
		rules      memberRules
		models     []string
		in         limit.Limits
		wantModels string
		want       string // admin.LimitWords of the result
		err        string
	}{
		{name: "no rules", in: limit.Limits{RPM: 5}, want: "rpm 5"},
		{name: "the allowlist when none is named", rules: memberRules{Models: []string{"a", "b"}}, wantModels: "a,b"},
		{name: "within the allowlist", rules: memberRules{Models: []string{"a", "b"}}, models: []string{"b"}, wantModels: "b"},
		{name: "outside it", rules: memberRules{Models: []string{"a"}}, models: []string{"a", "c"}, err: "models: c is not a model you may use; yours are a"},
		{name: "empty limits take the member's", rules: memberRules{Limits: limit.Limits{TPM: 1000, MaxParallel: 2, BudgetUSD: ten}}, in: limit.Limits{RPM: 9},
			want: "rpm 9, tpm 1000, parallel 2, $10/total"},
		{name: "lower ones stay", rules: memberRules{Limits: limit.Limits{TPM: 1000, BudgetUSD: ten}}, in: limit.Limits{TPM: 10, BudgetUSD: five, BudgetPeriod: "total"},
			want: "tpm 10, $5/total"},
		{name: "higher ones are refused", rules: memberRules{Limits: limit.Limits{MaxParallel: 2}}, in: limit.Limits{MaxParallel: 3}, err: "max_parallel: at most 2"},
		{name: "another period is refused", rules: memberRules{Limits: limit.Limits{BudgetUSD: ten, BudgetPeriod: "daily"}}, in: limit.Limits{BudgetUSD: five},
			err: "budget_period: must be daily"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			models, got, err := tt.rules.apply(tt.models, tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := strings.Join(models, ","); m != tt.wantModels {
				t.Errorf("models %q, want %q", m, tt.wantModels)
			}
			if w := strings.Join(admin.LimitWords(got), ", "); w != tt.want {
				t.Errorf("limits %q, want %q", w, tt.want)
			}
		})
	}
}

// A user's own allowlist and limits are theirs in place of the team's.
func TestMemberRulesOfTheUser(t *testing.T) {
	p := newFixture(t)
	u := p.alice
	if r := p.c.memberRules(context.Background(), &u); r.TeamID != "team_eng" || strings.Join(r.Models, ",") != "echo,claude-sonnet" || r.LimitsText() != "rpm 60, $25/monthly" {
		t.Errorf("the team's rules: %+v %s", r, r.LimitsText())
	}
	u.Models, u.Limits = []string{"echo"}, []byte(`{"rpm":5}`)
	if r := p.c.memberRules(context.Background(), &u); strings.Join(r.Models, ",") != "echo" || r.LimitsText() != "rpm 5" {
		t.Errorf("the user's own rules: %+v %s", r, r.LimitsText())
	}
	u.PrimaryTeamID, u.Models, u.Limits = "", nil, nil
	if r := p.c.memberRules(context.Background(), &u); r.TeamID != "" || r.Models != nil || !r.Limits.IsZero() {
		t.Errorf("without a team: %+v", r)
	}
}
