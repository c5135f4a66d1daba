package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check-config aligns its provider table whatever the lengths of names
// and types, and warns of the targets nothing prices.
func TestCheckConfigTableAndPriceWarnings(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	path := filepath.Join(t.TempDir(), "tollgate.yaml")
	if err := os.WriteFile(path, []byte(`
database: { url: none }
providers:
  - { name: demo, type: echo }
  - { name: responses-upstream-long-name, type: openai-responses, api_key: sk-0123456789abcdef }
  - { name: ant, type: anthropic, api_key: sk-0123456789abcdef }
  - { name: local, type: openai, base_url: "http://127.0.0.1:1/v1" }
models:
  - { name: echo, targets: [ { provider: demo } ] }
  - { name: sonnet, targets: [ { provider: ant, model: claude-sonnet-4-5 } ] }
  - { name: mine, targets: [ { provider: local, model: my-finetune }, { provider: ant, model: my-ant-model } ] }
  - { name: priced, targets: [ { provider: local, model: my-finetune } ], pricing: { input: "1", output: "2" } }
  - { name: "claude-*", targets: [ { provider: ant } ] }
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(t, "check-config", "--config", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Every provider's type, and what follows it, starts in one column.
	_, section, _ := strings.Cut(out, "providers:\n")
	section, _, _ = strings.Cut(section, "\n\n")
	lines := strings.Split(section, "\n")
	if len(lines) != 4 {
		t.Fatalf("providers:\n%s", section)
	}
	typeCol, restCol := -1, -1
	for i, l := range lines {
		f := strings.Fields(l)
		tc, rc := strings.Index(l, " "+f[1]+" ")+1, strings.Index(l, " "+f[2])+1
		if i == 0 {
			typeCol, restCol = tc, rc
		} else if tc != typeCol || rc != restCol {
			t.Errorf("misaligned provider table:\n%s", section)
			break
		}
	}
	want := `warning: models[2] "mine": no price for local/my-finetune, ant/my-ant-model: its cost is unknown and USD budgets cannot count it; set models[2].pricing, or list the model in a pricing.files file` + "\n"
	if errs != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", errs, want)
	}
}
