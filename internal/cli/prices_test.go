package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/config"
)

const priceFile = `{
  "sample_spec": {"input_cost_per_token": 0.0, "litellm_provider": "docs"},
  "claude-sonnet-4-5-20250929": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "litellm_provider": "anthropic"},
  "bedrock/eu.anthropic.claude-haiku-4-5-20251001-v1:0": {"input_cost_per_token": 1.1e-06, "output_cost_per_token": 5.5e-06, "litellm_provider": "bedrock"},
  "my-finetune": {"input_cost_per_token": 4e-06, "output_cost_per_token": 8e-06, "litellm_provider": "openai"},
  "float-artefact": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5000000000000002e-05, "litellm_provider": "openai"},
  "broken": {"input_cost_per_token": "three"}
}`

// TestPriceFilesPrecedence: a model's own pricing, then the price files,
// then the built-in catalogue; a Bedrock id as the file writes it.
func TestPriceFilesPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(file, []byte(priceFile), 0o600)
	cfg, err := config.Parse([]byte(`
pricing: { files: [`+file+`] }
providers:
  - { name: ant, type: anthropic, api_key: k }
  - { name: oai, type: openai, api_key: k }
  - { name: aws, type: bedrock, region: eu-west-1, access_key_id: AKID, secret_access_key: s }
models:
  - { name: own, targets: [ { provider: ant, model: claude-sonnet-4-5-20250929 } ], pricing: { input: "9", output: "9" } }
  - { name: file, targets: [ { provider: ant, model: claude-sonnet-4-5-20250929 } ] }
  - { name: finetune, targets: [ { provider: oai, model: my-finetune } ] }
  - { name: haiku, targets: [ { provider: aws, model: "eu.anthropic.claude-haiku-4-5-20251001-v1:0" } ] }
  - { name: builtin, targets: [ { provider: ant, model: claude-opus-4-1-20250805 } ] }
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	routes, _, err := buildRoutes(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]string{"own": "9", "file": "1", "finetune": "4", "haiku": "1.1", "builtin": "15"} {
		m := routes.Lookup([]byte(model))
		if got := m.Targets[0].Prices.Input.String(); got != want {
			t.Errorf("%s: input %s, want %s", model, got, want)
		}
	}
	cfg.Pricing.Files = []string{filepath.Join(t.TempDir(), "missing.json")}
	if _, _, err := buildRoutes(cfg, nil); err == nil || !strings.Contains(err.Error(), "pricing.files[0]") {
		t.Errorf("a missing price file: %v", err)
	}
}

func TestPricesCheck(t *testing.T) {
	file := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(file, []byte(priceFile), 0o600)
	var out, errOut bytes.Buffer
	if code := Main([]string{"prices", "check", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"claude-sonnet-4-5-20250929", "eu.anthropic.claude-haiku-4-5-20251001-v1:0", "my-finetune", "float-artefact", "5 model ids priced",
		"1 entries skipped, 1 prices rounded to the nano-USD"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "skipped broken:") ||
		!strings.Contains(errOut.String(), "rounded float-artefact: output_cost_per_token 1.5000000000000002e-05 USD per token: 15 USD per million tokens, rounded to the nano-USD\n") {
		t.Errorf("stderr: %s", errOut.String())
	}
	out.Reset()
	if code := Main([]string{"prices", "check", "--model", "my-finetune", file}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "my-finetune") ||
		strings.Contains(out.String(), "claude") {
		t.Errorf("--model: %d\n%s", code, out.String())
	}
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, []byte(`{"dall-e": {"input_cost_per_pixel": 1e-08}}`), 0o600)
	for _, args := range [][]string{{"prices", "check", empty}, {"prices", "check", "/nonexistent.json"}} {
		if code := Main(args, &out, &errOut); code != 1 {
			t.Errorf("%v: exit %d, want 1", args, code)
		}
	}
	for _, args := range [][]string{{"prices"}, {"prices", "check"}, {"prices", "list"}} {
		if code := Main(args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
