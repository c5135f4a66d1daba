package cli_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// TestUsageKeysAndModels: --key takes a key's name or id, --by key shows
// names, and --by model groups by configured model, on each back end,
// from the database and from a running gateway. The records are on a
// fixed day, queried with explicit dates: nothing depends on today.
func TestUsageKeysAndModels(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dbURLs := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "usage.db")}
	if _, withSchema := storetest.SchemaURL(t); withSchema != "" {
		dbURLs["postgres"] = withSchema
	}
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	span := []string{"--since", "2026-11-22T00:00:00Z", "--until", "2026-11-23T00:00:00Z"}
	for name, dbURL := range dbURLs {
		t.Run(name, func(t *testing.T) {
			cfgPath, cfg, db := cliDB(t, dbURL)
			ctx := context.Background()
			local := []string{"--config", cfgPath}
			ids := map[string]string{} // by a name of the test's
			for _, k := range []struct{ ref, name string }{{"alice", "alice"}, {"bob1", "bob"}, {"bob2", "bob"}} {
				out, errs, code := run(t, append([]string{"keys", "create", "--name", k.name, "--json"}, local...)...)
				var v struct{ ID string }
				if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.ID == "" {
					t.Fatalf("keys create %s: %d %q %q", k.name, code, out, errs)
				}
				ids[k.ref] = v.ID
			}
			cost := func(n int64) *int64 { return &n }
			at := func(i int) time.Time { return day.Add(time.Duration(i) * time.Minute) }
			recs := []store.Request{
				{ID: "req_1", Time: at(1), KeyID: ids["alice"], Endpoint: "/v1/chat/completions", Model: "e", CanonicalModel: "echo",
					Status: 200, Input: 10, CostNanoUSD: cost(30)},
				{ID: "req_2", Time: at(2), KeyID: ids["alice"], Endpoint: "/v1/models", Status: 200, CostNanoUSD: cost(0)},
				{ID: "req_3", Time: at(3), KeyID: ids["bob1"], Endpoint: "/v1/messages", Model: "echo", CanonicalModel: "echo",
					Status: 200, Input: 20, CostNanoUSD: cost(60)},
				{ID: "req_4", Time: at(4), KeyID: ids["bob2"], Endpoint: "/v1/messages", Model: "gpt-9", Status: 404,
					ErrorType: "not_found_error", CostNanoUSD: cost(0)},
				{ID: "req_5", Time: at(5), Endpoint: "/v1/chat/completions", Model: "free", CanonicalModel: "free", Status: 200, Input: 5},
				{ID: "req_6", Time: at(6), Endpoint: "/v1/chat/completions", Model: "nope", Status: 404,
					ErrorType: "not_found_error", CostNanoUSD: cost(0)},
			}
			if err := db.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			built, err := cli.Build(cfg, cli.Options{MasterKey: "sk-master-cli", Logger: slog.New(slog.DiscardHandler), Store: db})
			if err != nil {
				t.Fatal(err)
			}
			gw := httptest.NewServer(built.Handler)
			defer func() { gw.Close(); built.Close() }()
			remote := []string{"--url", gw.URL, "--admin-key", "sk-master-cli"}

			for mode, flags := range map[string][]string{"config": local, "url": remote} {
				usage := func(args ...string) (string, string, int) {
					return run(t, append(append(append([]string{"usage"}, args...), span...), flags...)...)
				}
				type report struct {
					Data []struct {
						Group    string
						KeyName  *string `json:"key_name"`
						Requests int
						Errors   int
						Tokens   struct{ Input int }
					}
					Total struct{ Requests int }
				}
				// --key by name, and by id.
				for ref, key := range map[string]string{"name": "alice", "id": ids["alice"]} {
					out, errs, code := usage("--key", key, "--format", "json")
					var rep report
					if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Data) != 1 || rep.Data[0].Group != "echo" ||
						rep.Data[0].Tokens.Input != 10 || rep.Total.Requests != 1 {
						t.Errorf("%s: --key by %s: %d %q %q", mode, ref, code, out, errs)
					}
				}
				out, errs, code := usage("--key", ids["bob2"])
				if code != 0 || !strings.Contains(out, "of key bob ("+ids["bob2"]+")") || !strings.Contains(out, store.UnknownModel) {
					t.Errorf("%s: --key with a shared name's id: %d %q %q", mode, code, out, errs)
				}
				// A shared name is refused, naming the keys; an unknown one
				// names the database looked at.
				_, errs, code = usage("--key", "bob")
				if code != 1 || !strings.Contains(errs, "2 keys have this name") || !strings.Contains(errs, ids["bob1"]) ||
					!strings.Contains(errs, ids["bob2"]) {
					t.Errorf("%s: --key with a shared name: %d %q", mode, code, errs)
				}
				where := gw.URL
				if mode == "config" {
					where = cfgPath
					if name == "sqlite" {
						where = dbURL + " (database.url in " + cfgPath + ")"
					}
				}
				_, errs, code = usage("--key", "carol")
				if code != 1 || !strings.Contains(errs, `--key "carol": no key has this name or ID in `) || !strings.Contains(errs, where) {
					t.Errorf("%s: --key with no such key: %d %q; want it to name %s", mode, code, errs, where)
				}

				// --by key: names; the id too where two keys share one.
				out, errs, code = usage("--by", "key")
				labels := map[string]bool{}
				for _, line := range strings.Split(out, "\n") {
					if label, _, ok := strings.Cut(strings.TrimSpace(line), "  "); ok {
						labels[label] = true
					}
				}
				for _, want := range []string{"alice", "bob (" + ids["bob1"] + ")", "bob (" + ids["bob2"] + ")", "(master key)"} {
					if code != 0 || !labels[want] {
						t.Errorf("%s: --by key table: no row %q: %d\n%s%s", mode, want, code, out, errs)
					}
				}
				if strings.Contains(out, ids["alice"]) {
					t.Errorf("%s: --by key table shows a unique name's id:\n%s", mode, out)
				}
				out, _, code = usage("--by", "key", "--format", "csv")
				rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				names := map[string]string{}
				for _, r := range rows[1:] {
					names[r[0]] = r[1]
				}
				if code != 0 || err != nil || rows[0][0] != "group" || rows[0][1] != "key_name" || rows[0][2] != "requests" ||
					names[ids["alice"]] != "alice" || names[ids["bob1"]] != "bob" || names[""] != "" || len(names) != 4 {
					t.Errorf("%s: --by key csv: %d %v\n%s", mode, code, err, out)
				}
				out, _, code = usage("--by", "key", "--format", "json")
				var rep report
				if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Data) != 4 || rep.Total.Requests != 5 {
					t.Fatalf("%s: --by key json: %d\n%s", mode, code, out)
				}
				for _, g := range rep.Data {
					want := map[string]string{ids["alice"]: "alice", ids["bob1"]: "bob", ids["bob2"]: "bob"}[g.Group]
					if g.Group == "" && g.KeyName != nil || g.Group != "" && (g.KeyName == nil || *g.KeyName != want) {
						t.Errorf("%s: --by key json: group %q named %v, want %q", mode, g.Group, g.KeyName, want)
					}
				}

				// --by model: an alias with its model, invented names in
				// one group, last, and the model listing nowhere.
				out, _, code = usage("--by", "model", "--format", "csv")
				rows, err = csv.NewReader(strings.NewReader(out)).ReadAll()
				var groups []string
				for _, r := range rows[1:] {
					groups = append(groups, r[0]+"="+r[1])
				}
				if got := strings.Join(groups, " "); code != 0 || err != nil || got != "echo=2 free=1 "+store.UnknownModel+"=2" {
					t.Errorf("%s: --by model: %d %v %q\n%s", mode, code, err, got, out)
				}
			}
		})
	}
}
