package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// checkStorable fails unless every text field of r is what both databases
// take: valid UTF-8, no NUL, within the bound, and the attempts JSON.
func checkStorable(t testing.TB, r store.Request) {
	t.Helper()
	for name, v := range map[string]string{"id": r.ID, "key": r.KeyID, "protocol": r.ClientProtocol, "model": r.Model,
		"provider": r.Provider, "upstream model": r.UpstreamModel, "lane": r.Lane, "error type": r.ErrorType,
		"client ip": r.ClientIP, "user agent": r.UserAgent} {
		if !utf8.ValidString(v) || strings.Contains(v, "\x00") || len(v) > store.MaxFieldBytes {
			t.Fatalf("%s %q (%d bytes): not storable", name, v, len(v))
		}
	}
	if r.Attempts != "" && (!json.Valid([]byte(r.Attempts)) || !strings.HasPrefix(r.Attempts, "[") ||
		len(r.Attempts) > store.MaxAttemptsBytes || !utf8.ValidString(r.Attempts) || strings.Contains(r.Attempts, "\x00")) {
		t.Fatalf("attempts %q (%d bytes): not a storable JSON array", r.Attempts, len(r.Attempts))
	}
}

func TestSanitizeRequest(t *testing.T) {
	long := strings.Repeat("é", 1<<19) // 1 MiB, two bytes a rune
	for _, tc := range []struct{ in, want string }{
		{"Mozilla/5.0", "Mozilla/5.0"},
		{"\xff", "\uFFFD"},
		{"a\x00b", "a\uFFFDb"},
		{"ok\xed\xa0\x80", "ok\uFFFD"}, // a UTF-16 surrogate, not valid UTF-8
		{strings.Repeat("x", store.MaxFieldBytes), strings.Repeat("x", store.MaxFieldBytes)},
		{strings.Repeat("x", store.MaxFieldBytes+1), strings.Repeat("x", store.MaxFieldBytes-3) + "…"},
		{long, strings.Repeat("é", (store.MaxFieldBytes-3)/2) + "…"}, // cut on a rune boundary
	} {
		got := store.SanitizeRequest(store.Request{UserAgent: tc.in, Model: tc.in, ErrorType: tc.in, ID: tc.in})
		if got.UserAgent != tc.want || got.Model != tc.want || got.ErrorType != tc.want || got.ID != tc.want {
			t.Errorf("%.40q: got %.40q, want %.40q", tc.in, got.UserAgent, tc.want)
		}
		checkStorable(t, got)
		if again := store.SanitizeRequest(got); again != got {
			t.Errorf("%.40q: sanitising twice changes the record", tc.in)
		}
	}

	r := store.SanitizeRequest(store.Request{LatencyMS: math.NaN(), TTFBMS: math.Inf(1), UpstreamMS: math.Inf(-1), OverheadMS: 1.5, Status: math.MaxInt64})
	if r.LatencyMS != 0 || r.TTFBMS != 0 || r.UpstreamMS != 0 || r.OverheadMS != 1.5 || r.Status != math.MaxInt32 {
		t.Errorf("numbers: %+v", r)
	}

	// A clean record, the usual case, is passed through without allocating.
	cost := int64(5)
	clean := store.Request{ID: "req_1", KeyID: "key_1", ClientProtocol: "openai", Model: "gpt-4o", Provider: "openai",
		UpstreamModel: "gpt-4o-2024-08-06", Lane: "passthrough", Status: 200, ClientIP: "10.0.0.1", UserAgent: "OpenAI/Python 1.0",
		CostNanoUSD: &cost, Attempts: `[{"target":"openai/gpt-4o","status":200,"error":"","ms":812.5}]`}
	if got := store.SanitizeRequest(clean); got != clean {
		t.Errorf("a clean record changed: %+v", got)
	}
	if n := testing.AllocsPerRun(100, func() { store.SanitizeRequest(clean) }); n != 0 {
		t.Errorf("sanitising a clean record allocates %.0f times", n)
	}
}

func TestSanitizeAttempts(t *testing.T) {
	one := `{"target":"a/x","status":529,"error":"` + strings.Repeat("e", 1000) + `","ms":1.5}`
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"target":"a/x","status":529,"error":"overloaded","ms":1.5},`, 200), ",") + "]"
	for _, tc := range []struct {
		name, in string
		check    func(string) bool
	}{
		{"empty", "", func(s string) bool { return s == "" }},
		{"none", "[]", func(s string) bool { return s == "[]" }},
		{"raw NUL", "[{\"error\":\"a\x00b\"}]", func(s string) bool { return s == "[{\"error\":\"a\uFFFDb\"}]" }},
		{"invalid byte", "[{\"error\":\"\xff\"}]", func(s string) bool { return s == "[{\"error\":\"\uFFFD\"}]" }},
		{"not JSON", "oops \x00 {", func(s string) bool { return strings.Contains(s, "\"error\":\"oops \uFFFD {\"") }},
		{"not an array", `{"a":1}`, func(s string) bool { return strings.HasPrefix(s, `[{"target":""`) }},
		{"long error", "[" + one + "]", func(s string) bool {
			return strings.Contains(s, `"status":529`) && strings.Contains(s, `"ms":1.5`) && len(s) < 400
		}},
		{"many attempts", many, func(s string) bool {
			var a []struct {
				Target string
				Status int
				Error  string
			}
			return json.Unmarshal([]byte(s), &a) == nil && len(a) > 10 && a[0].Target == "a/x" && a[0].Status == 529 &&
				strings.Contains(a[len(a)-1].Error, "more attempts not recorded")
		}},
	} {
		got := store.SanitizeRequest(store.Request{Attempts: tc.in})
		checkStorable(t, got)
		if !tc.check(got.Attempts) {
			t.Errorf("%s: %.300q", tc.name, got.Attempts)
		}
		if again := store.SanitizeRequest(got); again.Attempts != got.Attempts {
			t.Errorf("%s: sanitising twice changes the attempts", tc.name)
		}
	}
}

// hostile is a record whose text fields were once refused by PostgreSQL
// (invalid UTF-8, NUL) or are far too long to keep.
func hostile(id string) store.Request {
	return store.Request{ID: id, Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), ClientProtocol: "openai",
		Model: "a\x00b", Provider: "p", UpstreamModel: "u\xff", Lane: "passthrough", Status: 400,
		ErrorType: "bad\x00type", UserAgent: "curl/8 \xff\xfe" + strings.Repeat("A", 1<<20), ClientIP: "::1",
		Attempts: "[{\"target\":\"p/u\",\"status\":400,\"error\":\"\xff\x00\",\"ms\":1}]"}
}

// A request with byte 0xff in its User-Agent, or NUL in its model, once
// made PostgreSQL refuse the whole batch; every text field is now stored
// cleaned, and a megabyte of User-Agent as 256 bytes.
func TestHostileTextStored(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			recs := []store.Request{hostile("req_bad\xff\x00"), {ID: "req_good", Time: time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC), Model: "m", Attempts: "[]"}}
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatalf("a batch with hostile text: %v", err)
			}
			got, err := s.RequestByID(ctx, "req_bad\xff\x00")
			if err != nil {
				t.Fatal(err)
			}
			want := store.SanitizeRequest(recs[0])
			if got.ID != "req_bad\uFFFD\uFFFD" || got.Model != "a\uFFFDb" || got.UpstreamModel != "u\uFFFD" || got.ErrorType != "bad\uFFFDtype" ||
				got.UserAgent != want.UserAgent || len(got.UserAgent) > store.MaxFieldBytes || !strings.HasSuffix(got.UserAgent, "…") ||
				got.Attempts != want.Attempts {
				t.Errorf("stored as %+v", got)
			}
			checkStorable(t, got)
			// Filters with the same text find it, and never fail.
			for _, f := range []store.RequestFilter{{Model: "a\x00b"}, {AfterID: "req_good\x00"}} {
				if _, err := s.Requests(ctx, f); err != nil {
					t.Errorf("filter %+v: %v", f, err)
				}
			}
			if page, err := s.Requests(ctx, store.RequestFilter{Model: "a\x00b"}); err != nil || len(page) != 1 || page[0].ID != got.ID {
				t.Errorf("by model a\\x00b: %v %v", page, err)
			}
			if _, err := s.Requests(ctx, store.RequestFilter{KeyID: "k\xff\x00"}); err != nil {
				t.Errorf("by a key id with NUL: %v", err)
			}
			if _, _, err := s.Spend(ctx, "k\x00", []string{"a\x00b", "\xff"}, time.Time{}, time.Hour); err != nil {
				t.Errorf("spend: %v", err)
			}
			if _, err := s.Usage(ctx, store.UsageFilter{GroupBy: store.ByModel, KeyID: "k\x00\xff", Until: time.Now()}); err != nil {
				t.Errorf("usage: %v", err)
			}
		})
	}
}

// NUL and invalid UTF-8 in what the admin API passes on (a key's name,
// metadata, limits, an id in a path) once failed on PostgreSQL with a 500.
func TestKeysHostileText(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			hash := sha256.Sum256([]byte("sk-tg-nul"))
			k := store.Key{ID: "key_nul", Name: "a\x00b\xff", Hash: hash[:], Prefix: "sk-tg-\x00", Models: []string{"m\x00", "\xff"},
				Metadata: []byte("{\"team\":\"a\x00\xff\"}"), Limits: []byte("{\"x\":\"\x00\"}"), CreatedAt: time.Now()}
			if err := s.CreateKey(ctx, k); err != nil {
				t.Fatalf("create: %v", err)
			}
			got, err := s.KeyByID(ctx, "key_nul")
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "a\uFFFDb\uFFFD" || string(got.Metadata) != "{\"team\":\"a\uFFFD\uFFFD\"}" || got.Prefix != "sk-tg-\uFFFD" ||
				len(got.Models) != 2 || got.Models[0] != "m\x00" || got.Models[1] != "\uFFFD" {
				t.Errorf("stored as %+v (models %q)", got, got.Models)
			}
			if _, err := s.KeyByID(ctx, "key\x00\xff"); !store.IsNotFound(err) {
				t.Errorf("lookup by an id with NUL: %v, want not found", err)
			}
			name := "n\x00"
			if u, err := s.UpdateKey(ctx, "key_nul", store.KeyUpdate{Name: &name, Metadata: []byte("{\"\x00\":1}"), ModelLimits: []byte("\xff")}); err != nil || u.Name != "n\uFFFD" {
				t.Errorf("update: %+v %v", u, err)
			}
			if _, err := s.UpdateKey(ctx, "key\x00", store.KeyUpdate{Name: &name}); !store.IsNotFound(err) {
				t.Errorf("update of an id with NUL: %v, want not found", err)
			}
			if err := s.TouchKeys(ctx, map[string]time.Time{"key\x00": time.Now(), "key_nul": time.Now()}); err != nil {
				t.Errorf("touch: %v", err)
			}
		})
	}
}

// IsBadRecord tells a refused record from a database that is away.
func TestIsBadRecord(t *testing.T) {
	ctx := context.Background()
	lite, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if _, err := lite.Exec("CREATE TABLE t (id TEXT PRIMARY KEY, v INTEGER NOT NULL CHECK (v > 0))"); err != nil {
		t.Fatal(err)
	}
	bad := map[string]error{}
	_, bad["sqlite check"] = lite.Exec("INSERT INTO t VALUES ('a', 0)")
	_, bad["sqlite not null"] = lite.Exec("INSERT INTO t VALUES ('a', NULL)")
	bad["wrapped marker"] = fmt.Errorf("inserting: %w", store.ErrBadRecord)
	good := map[string]error{"nil": nil, "deadline": context.DeadlineExceeded, "plain": errors.New("connection refused")}
	_, good["sqlite syntax"] = lite.Exec("INSERT INTO nowhere VALUES (1)")

	if pgURL, _ := storetest.SchemaURL(t); pgURL != "" {
		pg, err := sql.Open("pgx", pgURL)
		if err != nil {
			t.Fatal(err)
		}
		defer pg.Close()
		_, bad["postgres invalid utf-8"] = pg.ExecContext(ctx, "SELECT $1::text", "\xff")
		_, bad["postgres nul"] = pg.ExecContext(ctx, "SELECT $1::text", "a\x00b")
		_, bad["postgres out of range"] = pg.ExecContext(ctx, "SELECT ($1::bigint)::int", int64(math.MaxInt64))
		_, good["postgres undefined table"] = pg.ExecContext(ctx, "INSERT INTO nowhere VALUES (1)")
		down, _ := sql.Open("pgx", "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2")
		defer down.Close()
		_, good["postgres unreachable"] = down.ExecContext(ctx, "SELECT 1")
	}
	for name, err := range bad {
		if err == nil || !store.IsBadRecord(err) {
			t.Errorf("%s: %v: want a bad record", name, err)
		}
	}
	for name, err := range good {
		if store.IsBadRecord(err) {
			t.Errorf("%s: %v: taken for a bad record", name, err)
		}
	}
}

// FuzzRecordStrings writes records with arbitrary text to SQLite, and to
// PostgreSQL when TOLLGATE_TEST_POSTGRES_URL is set: every write must
// succeed and read back as the sanitised record, valid UTF-8 throughout.
func FuzzRecordStrings(f *testing.F) {
	for _, seed := range [][3]string{
		{"\xff", "a\x00b", "curl/8"},
		{"", "", ""},
		{"\xed\xa0\x80", "é", `[{"target":"a","status":1,"error":"\u0000","ms":1}]`},
		{strings.Repeat("é", 200), "\x00\x00", "[" + strings.Repeat(`{"error":"x"},`, 400) + "{}]"},
		{"ok", "\xc3", "[1,\"\xff\",{\"k\":{\"n\":1}}]"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	ctx := context.Background()
	stores := storetest.Open(f)
	n := 0
	f.Fuzz(func(t *testing.T, a, b, c string) {
		n++
		rec := store.Request{ID: fmt.Sprintf("fz_%d_", n) + a, Time: time.UnixMilli(1_800_000_000_000 + int64(n)),
			KeyID: b, ClientProtocol: c, Model: a, Provider: b, UpstreamModel: c, Lane: a, Stream: n%2 == 0, Status: 200,
			ErrorType: b, ClientIP: c, UserAgent: a + b + c, Attempts: c, LatencyMS: 1, UsageEstimated: n%3 == 0}
		want := store.SanitizeRequest(rec)
		checkStorable(t, want)
		if again := store.SanitizeRequest(want); again != want {
			t.Fatalf("sanitising twice changes %+v", want)
		}
		if want.Attempts == "" {
			want.Attempts = "[]"
		}
		for name, s := range stores {
			if err := s.InsertRequests(ctx, []store.Request{rec}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := s.RequestByID(ctx, rec.ID)
			if err != nil {
				t.Fatalf("%s: reading back: %v", name, err)
			}
			checkStorable(t, got)
			got.Time = want.Time
			if got != want {
				t.Fatalf("%s: read back\n%+v\nwant\n%+v", name, got, want)
			}
		}
	})
}
