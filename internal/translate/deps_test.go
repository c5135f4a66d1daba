package translate

import (
	"os/exec"
	"strings"
	"testing"
)

// translate stays pure: no network, no storage, no gateway wiring.
func TestNoIODependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "net/http", dep == "database/sql",
			strings.HasSuffix(dep, "/internal/provider"), strings.HasSuffix(dep, "/internal/gateway"),
			strings.HasSuffix(dep, "/internal/store"), strings.HasSuffix(dep, "/internal/route"):
			t.Errorf("translate depends on %s", dep)
		}
	}
}
