package auth

import "testing"

// A person may call a model both their team's list and their own allow,
// each by any of the model's names.
func TestPersonAllowsModel(t *testing.T) {
	aliases := []string{"e", "echo-latest"}
	for _, tc := range []struct {
		name       string
		team, user []string
		want       bool
	}{
		{"no lists", nil, nil, true},
		{"team by name", []string{"echo"}, nil, true},
		{"user by alias", nil, []string{"e"}, true},
		{"team by name, user by alias", []string{"echo"}, []string{"e"}, true},
		{"team allows, user does not", []string{"echo"}, []string{"other"}, false},
		{"user allows, team does not", []string{"other"}, []string{"echo-latest"}, false},
	} {
		if got := NewPerson(Person{}, tc.team, tc.user).AllowsModel("echo", aliases); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	var none *Person
	if !none.AllowsModel("echo", nil) {
		t.Error("no person (the master key, a key without an owner) must allow every model")
	}
}
