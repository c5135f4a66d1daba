package identity_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// composedConfig: keys allow 4 requests a minute each, members 6 (the
// team's per-member default), the team 9: less than its members' 6 + 4.
const composedConfig = `
providers:
  - { name: demo, type: echo }
models:
  - { name: m, targets: [ { provider: demo } ] }
identity:
  teams:
    - name: squad
      limits: { rpm: 9 }
      member_limits: { rpm: 6 }
%s`

// A request fits its key's, its user's and its team's limits in one
// atomic step: with many requests at once from three keys of two members,
// exactly what the tightest limits allow gets through — key ⊂ user ⊂ team —
// on one replica, and on three sharing PostgreSQL and Redis.
func TestComposedLimits(t *testing.T) {
	t.Run("one replica", func(t *testing.T) {
		db := gatewaytest.OpenDB(t)
		u, _ := gatewaytest.StartAt(t, func(string) string { return fmt.Sprintf(composedConfig, "") }, cli.Options{MasterKey: masterKey, Store: db})
		composed(t, db, []string{u})
	})
	t.Run("three replicas", func(t *testing.T) {
		redisURL := os.Getenv("TOLLGATE_TEST_REDIS_URL")
		_, schemaURL := storetest.SchemaURL(t)
		if redisURL == "" || schemaURL == "" {
			t.Skip("TOLLGATE_TEST_REDIS_URL and TOLLGATE_TEST_POSTGRES_URL are needed for replicas sharing limits")
		}
		cfg := fmt.Sprintf(composedConfig, "redis: { url: "+redisURL+" }\n")
		var urls []string
		var first *store.Store
		for i := range 3 {
			db, err := store.Open(context.Background(), schemaURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if i == 0 {
				if err := db.Migrate(context.Background()); err != nil {
					t.Fatal(err)
				}
				first = db
			}
			u, _ := gatewaytest.StartAt(t, func(string) string { return cfg }, cli.Options{MasterKey: masterKey, Store: db})
			urls = append(urls, u)
		}
		composed(t, first, urls)
	})
}

func composed(t *testing.T, db *store.Store, urls []string) {
	t.Helper()
	ctx := context.Background()
	team, err := db.TeamByName(ctx, "squad")
	if err != nil {
		t.Fatal(err)
	}
	mkUser := func(name string) store.User {
		u := store.User{ID: "usr_" + name + fmt.Sprint(time.Now().UnixNano()), Subject: name + "@example.com", Source: "admin",
			PrimaryTeamID: team.ID, CreatedAt: time.Now(), Limits: []byte("{}")}
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := db.AddMember(ctx, team.ID, u.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		return u
	}
	mkKey := func(u store.User) string {
		secret, hash, prefix := auth.NewSecret()
		k := store.Key{ID: auth.NewKeyID(), Name: "k", Hash: hash, Prefix: prefix, CreatedAt: time.Now(), UserID: u.ID, TeamID: team.ID,
			Limits: []byte(`{"rpm":4}`), ModelLimits: []byte("{}"), Metadata: []byte("{}")}
		if err := db.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		return secret
	}
	a, b := mkUser("a"), mkUser("b")
	keys := map[string]string{"a1": mkKey(a), "a2": mkKey(a), "b1": mkKey(b)}

	var ok sync.Map // key name → *atomic.Int64
	var wg sync.WaitGroup
	var bad atomic.Int64
	for name, secret := range keys {
		n := new(atomic.Int64)
		ok.Store(name, n)
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
				req, _ := http.NewRequest("POST", urls[i%len(urls)]+"/v1/messages", strings.NewReader(body))
				req.Header.Set("x-api-key", secret)
				req.Header.Set("anthropic-version", "2023-06-01")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					bad.Add(1)
					return
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case 200:
					n.Add(1)
				case 429:
				default:
					bad.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d requests neither served nor refused by a limit", bad.Load())
	}
	get := func(name string) int64 { v, _ := ok.Load(name); return v.(*atomic.Int64).Load() }
	a1, a2, b1 := get("a1"), get("a2"), get("b1")
	if a1 > 4 || a2 > 4 || b1 > 4 || a1+a2 > 6 {
		t.Errorf("admitted a1=%d a2=%d b1=%d: want each key ≤ 4 and user a's two keys ≤ 6 together", a1, a2, b1)
	}
	if total := a1 + a2 + b1; total != 9 {
		t.Errorf("admitted %d in all (a1=%d a2=%d b1=%d), want exactly the team's 9", total, a1, a2, b1)
	}
}
