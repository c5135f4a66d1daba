package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// TestCheckConfigLoadsCredentials: check-config loads every cloud's
// credentials as serve does, without the network, and fails where serve
// would not start, with the same error: a key file that is missing, not
// JSON or holds a private key that does not parse, a profile that does
// not exist. Without configured credentials every cloud starts, and
// check-config names where they will come from.
func TestCheckConfigLoadsCredentials(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home") // no gcloud or AWS files
	t.Setenv("HOME", home)
	for _, v := range []string{"GOOGLE_APPLICATION_CREDENTIALS", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "aws-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "aws-credentials"))
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	tokens.Close()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good.json", string(tokens.ServiceAccountJSON()))
	badKey := file("bad-key.json", strings.Replace(string(tokens.ServiceAccountJSON()), "MII", "XXX", 1))
	notJSON := file("not-json.json", "client_email = a@b\n")
	for _, tc := range []struct {
		name, provider string
		wantErr        string // "" when both start
		wantOut        string
	}{
		{"vertex with a key file", `{ name: c, type: vertex, project: p, region: us-east5, credentials_file: "` + good + `" }`,
			"", "credentials=" + good},
		{"vertex without credentials: the metadata server", `{ name: c, type: vertex, project: p, region: us-east5 }`,
			"", "credentials=the metadata server (asked at the first request)"},
		{"vertex-gemini without credentials", `{ name: c, type: vertex-gemini, project: p, region: us-east5 }`,
			"", "credentials=the metadata server"},
		{"vertex with a broken private key", `{ name: c, type: vertex, project: p, region: us-east5, credentials_file: "` + badKey + `" }`,
			"private_key does not parse", ""},
		{"vertex with a file that is not JSON", `{ name: c, type: vertex, project: p, region: us-east5, credentials_file: "` + notJSON + `" }`,
			"not a Google credentials file", ""},
		{"vertex with a missing file", `{ name: c, type: vertex, project: p, region: us-east5, credentials_file: "` + filepath.Join(dir, "none.json") + `" }`,
			"no such file", ""},
		{"bedrock without credentials: the default chain", `{ name: c, type: bedrock, region: us-east-1 }`,
			"", "credentials=the AWS default chain"},
		{"bedrock with a missing profile", `{ name: c, type: bedrock, region: us-east-1, profile: nope }`,
			"nope", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := "providers:\n  - " + tc.provider + "\nmodels:\n  - { name: m, targets: [ { provider: c, model: x } ] }\n"
			path := file("tollgate.yaml", yaml)
			var out bytes.Buffer
			checkErr := checkConfig([]string{"--config", path}, &out, io.Discard)
			srv, serveErr := Build(testConfig(t, yaml), Options{MasterKey: "sk-master-key-0123456789abcdef"})
			if srv != nil {
				srv.Close()
			}
			if tc.wantErr == "" {
				if checkErr != nil || serveErr != nil {
					t.Fatalf("check-config: %v; serve: %v", checkErr, serveErr)
				}
				if !strings.Contains(out.String(), tc.wantOut) {
					t.Errorf("check-config does not say %q:\n%s", tc.wantOut, &out)
				}
				return
			}
			if checkErr == nil || serveErr == nil || checkErr.Error() != serveErr.Error() || !strings.Contains(checkErr.Error(), tc.wantErr) {
				t.Errorf("check-config: %v\nserve: %v\nwant the same error, saying %q", checkErr, serveErr, tc.wantErr)
			}
		})
	}
}
