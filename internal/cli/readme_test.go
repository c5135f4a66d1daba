package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// The configurations users copy: every ```yaml block of the README and
// every examples/*.yaml file must pass `tollgate check-config`.
const (
	readmePath  = "../../README.md"
	examplesDir = "../../examples"
)

// notConfigMarker, alone on the line before a ```yaml fence, exempts a
// block that is YAML but not a tollgate configuration.
const notConfigMarker = "<!-- not a tollgate config -->"

// fragmentBase completes a block that shows only some sections: one echo
// provider and one model, appended for whichever of the two it lacks.
const (
	fragmentProviders = "providers:\n  - { name: echo, type: echo }\n"
	fragmentModels    = "models:\n  - { name: echo, targets: [ { provider: echo } ] }\n"
)

// configSample is one configuration to check.
type configSample struct {
	where string // README.md:LINE (the opening fence) or examples/NAME
	line  int    // README line of the block's first line of YAML; 0 for a file
	text  string
}

// TestReadmeAndExampleConfigs runs check-config on every README block and
// example file, with every ${VAR} they use set to a dummy value. Nothing
// connects anywhere: check-config only loads and validates.
func TestReadmeAndExampleConfigs(t *testing.T) {
	md, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := readmeYAMLBlocks(md)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if len(samples) == 0 {
		t.Fatal("README.md: no ```yaml blocks found; has the fence syntax changed?")
	}
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no %s/*.yaml files found", examplesDir)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, configSample{where: "examples/" + filepath.Base(f), text: string(data)})
	}
	for _, s := range samples {
		t.Run(strings.ReplaceAll(s.where, "/", "_"), func(t *testing.T) {
			if err := checkSample(t, s); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestReadmeCheckCatchesBrokenBlocks makes sure the check above can fail:
// broken blocks are reported with their README line, marked ones skipped.
func TestReadmeCheckCatchesBrokenBlocks(t *testing.T) {
	// ''' stands for a fence, which a raw string cannot hold.
	md := strings.ReplaceAll(`# title

'''yaml
providers: [ { name: a, type: echo } ]
models: [ { name: m, targets: [ { provider: nope } ] } ]
'''

- a list item:

  '''yaml
  limits: { key_defaults: { budget_period: daily } }
  '''

`+notConfigMarker+`
'''yaml
apiVersion: v1
kind: ConfigMap
'''

'''yml
database: { url: "${TEST_README_DATABASE_URL}" }
auth: { master_key: "${TEST_README_MASTER_KEY}" }
'''
`, "'''", "```")
	samples, err := readmeYAMLBlocks([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(samples); got != 3 {
		t.Fatalf("found %d blocks, want 3 (the marked one skipped): %+v", got, samples)
	}
	wantErrs := []struct{ where, text string }{
		{"README.md:3", `unknown provider "nope"`},
		{"README.md:10", "budget_period: set without budget_usd"},
	}
	for i, w := range wantErrs {
		err := checkSample(t, samples[i])
		if err == nil {
			t.Errorf("%s: broken block passed the check", w.where)
			continue
		}
		if !strings.Contains(err.Error(), w.where+":") || !strings.Contains(err.Error(), w.text) {
			t.Errorf("%s: error %q does not name the block's line and %q", w.where, err, w.text)
		}
	}
	if err := checkSample(t, samples[2]); err != nil {
		t.Errorf("a fragment with ${VAR}s: %v", err)
	}
}

// checkSample runs check-config on s, completed if it is a fragment and
// with its ${VAR}s set; the error names where s is.
func checkSample(t *testing.T, s configSample) error {
	t.Helper()
	fail := func(err error) error {
		if s.line > 0 {
			return fmt.Errorf("%s: ```yaml block (its first line of YAML is README line %d; line N of the block is README line %d+N): %w",
				s.where, s.line, s.line-1, err)
		}
		return fmt.Errorf("%s: %w", s.where, err)
	}
	text, err := completeFragment(s.text)
	if err != nil {
		return fail(err)
	}
	for _, name := range envReferences(text) {
		t.Setenv(name, dummyEnvValue(name))
	}
	text = dummyKeyFiles(t, text)
	path := filepath.Join(t.TempDir(), "tollgate.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := checkConfig([]string{"--config", path}, &out, io.Discard); err != nil {
		return fail(fmt.Errorf("check-config fails: %w", err))
	}
	if !strings.HasPrefix(out.String(), "configuration OK") {
		return fail(fmt.Errorf("check-config printed %q, want configuration OK", out.String()))
	}
	return nil
}

// readmeYAMLBlocks returns the ```yaml (or ```yml) blocks of a Markdown
// text, indented ones (inside list items) too, except those marked with
// notConfigMarker on the line before the fence.
func readmeYAMLBlocks(md []byte) ([]configSample, error) {
	lines := strings.Split(string(md), "\n")
	var out []configSample
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		lang := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(trimmed, "```")))
		fenceLine, indent := i+1, len(lines[i])-len(strings.TrimLeft(lines[i], " "))
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "```" {
				end = j
				break
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("line %d: code block is never closed", fenceLine)
		}
		i = end
		if lang != "yaml" && lang != "yml" {
			continue
		}
		if fenceLine >= 2 && strings.TrimSpace(lines[fenceLine-2]) == notConfigMarker {
			continue
		}
		body := make([]string, 0, end-fenceLine)
		for _, l := range lines[fenceLine:end] {
			body = append(body, strings.TrimPrefix(l, strings.Repeat(" ", indent)))
		}
		out = append(out, configSample{
			where: fmt.Sprintf("README.md:%d", fenceLine),
			line:  fenceLine + 1,
			text:  strings.Join(body, "\n") + "\n",
		})
	}
	return out, nil
}

// completeFragment appends the base's providers and models to a block
// that lacks them, keeping the block's own lines where they were (so that
// line numbers in errors still count from the block's first line).
func completeFragment(text string) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return "", fmt.Errorf("not valid YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return "", errors.New("not a YAML mapping; mark a block that is not a tollgate configuration with " + notConfigMarker)
	}
	root := doc.Content[0]
	var keys []string
	var providers *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		keys = append(keys, root.Content[i].Value)
		if root.Content[i].Value == "providers" {
			providers = root.Content[i+1]
		}
	}
	hasProviders, hasModels := slices.Contains(keys, "providers"), slices.Contains(keys, "models")
	if hasProviders && hasModels {
		return text, nil
	}
	if root.Style&yaml.FlowStyle != 0 {
		return "", errors.New("a fragment must be a block mapping (one top-level key per line)")
	}
	switch {
	case !hasProviders && !hasModels:
		return text + fragmentProviders + fragmentModels, nil
	case !hasProviders:
		return text + fragmentProviders, nil
	}
	// Providers without models: route the base model to an echo provider of the block's.
	if providers != nil && providers.Kind == yaml.SequenceNode {
		for _, p := range providers.Content {
			var pc struct{ Name, Type string }
			if p.Decode(&pc) == nil && pc.Type == "echo" && pc.Name != "" {
				return text + fmt.Sprintf("models:\n  - { name: echo, targets: [ { provider: %q } ] }\n", pc.Name), nil
			}
		}
	}
	return "", errors.New("the block declares providers but no models: add a model, or an echo provider for the check to route one to")
}

// envRef matches ${VAR} and ${VAR:-default}, but not the literal $${.
var envRef = regexp.MustCompile(`(^|[^$])\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// envReferences lists the variables text refers to, once each.
func envReferences(text string) []string {
	var names []string
	for _, m := range envRef.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(names, m[2]) {
			names = append(names, m[2])
		}
	}
	return names
}

// dummyEnvValue is a plausible value for a variable, judged by its name:
// secrets are long enough for a master key and safe inside a URL.
func dummyEnvValue(name string) string {
	n := strings.ToUpper(name)
	has := func(parts ...string) bool {
		return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(n, p) })
	}
	switch {
	case has("PASSWORD", "SECRET", "TOKEN", "KEY"):
		return "dummy-secret-0123456789abcdef0123456789abcdef"
	case has("DATABASE_URL", "POSTGRES"):
		return "postgres://tollgate:dummy@127.0.0.1:5432/tollgate?sslmode=disable"
	case has("REDIS"):
		return "redis://127.0.0.1:6379/0"
	case strings.HasSuffix(n, "_URL"):
		return "http://127.0.0.1:9/v1"
	}
	return "dummy-0123456789abcdef0123456789abcdef"
}

// keyFileRE finds the key files a sample names (/etc/tollgate/vertex-sa.json),
// which check-config reads, as serve does.
var keyFileRE = regexp.MustCompile(`\b(credentials_file:\s*)("[^"]*"|[^\s,}]+)`)

// dummyKeyFiles points every credentials_file of text at a service account
// key that loads (its token endpoint is never asked).
func dummyKeyFiles(t *testing.T, text string) string {
	if !keyFileRE.MatchString(text) {
		return text
	}
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	tokens.Close()
	file := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(file, tokens.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	return keyFileRE.ReplaceAllString(text, "${1}"+strconv.Quote(file))
}
