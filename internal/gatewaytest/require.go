package gatewaytest

import (
	"os"
	"testing"
)

// Require returns the value of env, which names something a test of a
// real client needs from outside the repository (a CLI that .ci/run
// installs); why says what. Without it the test is skipped, or fails in
// CI (CI=true), which must run every such test.
func Require(t testing.TB, env, why string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		Missing(t, env+" is not set: "+why)
	}
	return v
}

// Missing skips a test that lacks what msg says it needs, or fails it in
// CI (CI=true).
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI must run this test")
	}
	t.Skip(msg)
}
