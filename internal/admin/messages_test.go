package admin_test

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// A body the admin API cannot read is refused naming the field in the
// API's terms (its JSON path, what is accepted, what came), never the
// decoder's Go types or packages.
func TestAdminBodyErrorsNameNoGoInternals(t *testing.T) {
	e := newEnv(t, storetest.Open(t)["sqlite"])
	var k admin.KeyView
	if status, body := e.call("POST", "/admin/keys", master, `{"name":"x"}`, &k); status != 201 {
		t.Fatalf("%d %v", status, body)
	}
	const rfc3339 = `expected an RFC 3339 time such as 2026-01-02T15:04:05Z, got "tomorrow"`
	tests := []struct {
		method, body, want string
	}{
		{"POST", `{"name":"a","modles":["e"]}`, `unknown field "modles"; expected one of name, models, expires_at, metadata, limits, model_limits, user_id, team_id`},
		{"POST", `{"name":"a","expires_at":"tomorrow"}`, "expires_at: " + rfc3339},
		{"POST", `{"name":`, "name: invalid JSON at byte 8: unexpected end of input"},
		{"POST", `{"name":"a"} x`, "invalid JSON at byte 13: invalid character 'x' after top-level value"},
		{"POST", `{"name":"a","name":"b"}`, `duplicate field "name"`},
		{"POST", `[]`, "expected an object, got an array"},
		{"POST", `{"name":5}`, "name: expected a string, got a number"},
		{"POST", `{"name":"a","models":"e"}`, "models: expected an array, got a string"},
		{"POST", `{"name":"a","limits":{"rpn":1}}`, `limits: unknown field "rpn"; expected one of rpm, tpm, max_parallel, budget_usd, budget_period`},
		{"POST", `{"name":"a","limits":{"rpm":1e30}}`, "limits.rpm: expected an integer from -9223372036854775808 to 9223372036854775807, got 1e30"},
		{"POST", `{"name":"a","limits":{"budget_usd":"abc"}}`, `limits.budget_usd: "abc" is not an amount of USD such as 25 or 0.5`},
		{"POST", `{"name":"a","model_limits":{"echo":{"rpm":"x"}}}`, "model_limits.echo.rpm: expected an integer, got a string"},
		{"PATCH", `{"expires_at":"tomorrow"}`, "expires_at: " + rfc3339},
		{"PATCH", `{"name":5}`, "name: expected a string, got a number"},
		{"PATCH", `{"models":"e"}`, "models: expected an array, got a string"},
		{"PATCH", `{"limits":{"rpn":1}}`, `limits: unknown field "rpn"; expected one of rpm, tpm, max_parallel, budget_usd, budget_period`},
		{"PATCH", `{"model_limits":{"gpt-4.1":{"tpm":1.5}}}`, `model_limits["gpt-4.1"].tpm: expected an integer, got 1.5`},
		{"PATCH", `{"name":`, "name: invalid JSON at byte 8: unexpected end of input"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.body, func(t *testing.T) {
			path := "/admin/keys"
			if tc.method == "PATCH" {
				path += "/" + k.ID
			}
			status, body := e.call(tc.method, path, master, tc.body, nil)
			info, _ := body["error"].(map[string]any)
			msg, _ := info["message"].(string)
			if status != 400 || body["type"] != "error" || info["type"] != "invalid_request_error" {
				t.Fatalf("got %d %v, want 400 in the admin envelope", status, body)
			}
			if msg != tc.want {
				t.Errorf("message %q, want %q", msg, tc.want)
			}
			for _, bad := range []string{"Go ", "json:", "jsontext", "unmarshal", "admin.", "limit.", "time.", "jsonx"} {
				if strings.Contains(msg, bad) {
					t.Errorf("message %q names Go internals (%q)", msg, bad)
				}
			}
		})
	}
}
