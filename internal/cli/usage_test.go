package cli_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
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
				{ID: "req_1", Time: at(1), KeyID: ids["alice"], Endpoint: "/v1/chat/completions", Model: "e", CanonicalModel: "echo", Provider: "demo",
					Status: 200, Input: 10, CostNanoUSD: cost(30)},
				{ID: "req_2", Time: at(2), KeyID: ids["alice"], Endpoint: "/v1/models", Status: 200, CostNanoUSD: cost(0)},
				{ID: "req_3", Time: at(3), KeyID: ids["bob1"], Endpoint: "/v1/messages", Model: "echo", CanonicalModel: "echo", Provider: "demo",
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

				// --by provider: the requests that reached none are named.
				out, errs, code = usage("--by", "provider")
				_, table, _ := strings.Cut(out, "GROUP")
				table, _, _ = strings.Cut(table, "TOTAL")
				var rows2 []string
				for _, line := range strings.Split(table, "\n")[1:] {
					if line = strings.TrimSpace(line); line != "" {
						label, rest, _ := strings.Cut(line, "  ")
						rows2 = append(rows2, label+"="+strings.Fields(rest)[0])
					}
				}
				if got := strings.Join(rows2, " "); code != 0 || got != "(no provider)=3 demo=2" {
					t.Errorf("%s: --by provider: %d %q\n%s%s", mode, code, rows2, out, errs)
				}
			}
		})
	}
}

// TestUsageCacheSavings: what prompt caching saved shows in every format:
// in USD in the table, negative where cache writes cost more than reads
// saved, marked and explained where it is unknown; exact in the CSV and
// the JSON.
func TestUsageCacheSavings(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	cfgPath, _, db := cliDB(t, "sqlite://"+filepath.Join(t.TempDir(), "savings.db"))
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	n := func(v int64) *int64 { return &v }
	rec := func(id, model string, min int) store.Request {
		return store.Request{ID: id, Time: day.Add(time.Duration(min) * time.Minute), Endpoint: "/v1/messages", Model: model,
			CanonicalModel: model, Status: 200, Input: 10, Output: 5, CostNanoUSD: n(105_000)}
	}
	reads, writes, unpriced, mixed := rec("req_r", "echo", 1), rec("req_w", "free", 2), rec("req_u", "nope", 3), rec("req_m", "other", 4)
	reads.CacheRead, reads.CacheSavingsNano = 1000, n(2_700_000) // 1000 × ($3 − $0.30)/M
	writes.CacheWrite5m, writes.CacheSavingsNano = 1000, n(-750_000)
	// A name no model has, unpriced.
	unpriced.CacheRead, unpriced.CostNanoUSD, unpriced.CanonicalModel = 1000, nil, ""
	// A saving known, and one as if recorded before savings were.
	mixedOld := rec("req_m_old", "other", 5)
	mixed.CacheRead, mixed.CacheSavingsNano = 10, n(27_000)
	mixedOld.CacheRead = 10
	if err := db.InsertRequests(context.Background(), []store.Request{reads, writes, unpriced, mixed, mixedOld}); err != nil {
		t.Fatal(err)
	}
	usage := func(format string) string {
		t.Helper()
		out, errs, code := run(t, "usage", "--config", cfgPath, "--since", "2026-11-22T00:00:00Z", "--until", "2026-11-23T00:00:00Z",
			"--format", format)
		if code != 0 {
			t.Fatalf("usage --format %s: %d %q", format, code, errs)
		}
		return out
	}

	out := usage("table")
	cells := map[string]string{} // each group's last column: its saving
	for _, line := range strings.Split(out, "\n") {
		f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		if len(f) == 11 {
			cells[f[0]] = f[10]
		}
	}
	for group, want := range map[string]string{"GROUP": "CACHE SAVINGS USD", "echo": "0.0027", "free": "-0.00075",
		"other": "0.000027 + unknown †", store.UnknownModel: "unknown †", "TOTAL": "0.001977 + unknown †"} {
		if cells[group] != want {
			t.Errorf("table: %s's saving %q, want %q\n%s", group, cells[group], want, out)
		}
	}
	if !strings.Contains(out, "† 2 requests have an unknown cache saving") {
		t.Errorf("table: no footnote for the unknown savings:\n%s", out)
	}

	rows, err := csv.NewReader(strings.NewReader(usage("csv"))).ReadAll()
	if err != nil || len(rows) != 5 {
		t.Fatalf("csv: %v %v", rows, err)
	}
	if got := strings.Join(rows[0][12:], ","); got != "cache_savings_nano_usd,cache_savings_usd,cache_savings_unknown_requests" {
		t.Errorf("csv header: %q", got)
	}
	var got []string
	for _, r := range rows[1:] {
		got = append(got, r[0]+"="+strings.Join(r[12:], "/"))
	}
	if g := strings.Join(got, " "); g != "echo=2700000/0.0027/0 free=-750000/-0.00075/0 other=27000/0.000027/1 "+store.UnknownModel+"=//1" {
		t.Errorf("csv savings: %s", g)
	}

	var rep struct {
		Data []struct {
			Group   string
			Saved   *int64 `json:"cache_savings_nano_usd"`
			Unknown int64  `json:"cache_savings_unknown_requests"`
		}
		Total struct {
			Saved   *int64 `json:"cache_savings_nano_usd"`
			Unknown int64  `json:"cache_savings_unknown_requests"`
		}
	}
	if err := json.Unmarshal([]byte(usage("json")), &rep); err != nil || len(rep.Data) != 4 {
		t.Fatalf("json: %+v %v", rep, err)
	}
	if rep.Data[3].Saved != nil || rep.Data[3].Unknown != 1 || rep.Total.Saved == nil || *rep.Total.Saved != 1_977_000 || rep.Total.Unknown != 2 {
		t.Errorf("json: %+v", rep)
	}
}
