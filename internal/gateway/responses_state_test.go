package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// upstreamResponses numbers the responses of storingUpstream.
var upstreamResponses atomic.Int64

// storingUpstream is a Responses upstream that keeps what it answers, as
// OpenAI's does: each answer is responses.json with an id of its own.
func storingUpstream(t *testing.T) *upstreamtest.Server {
	t.Helper()
	up := upstreamtest.New(func(upstreamtest.Received) upstreamtest.Reply {
		body, _ := sjson.SetBytes(upstreamtest.File("responses.json"), "id", fmt.Sprintf("resp_up%03d", upstreamResponses.Add(1)))
		return upstreamtest.Reply{Body: body}
	})
	t.Cleanup(up.Close)
	return up
}

// newKey stores a virtual key and returns its secret.
func newKey(t *testing.T, db *store.Store, name string) string {
	t.Helper()
	secret, hash, prefix := auth.NewSecret()
	if err := db.CreateKey(context.Background(), store.Key{ID: auth.NewKeyID(), Name: name, Hash: hash, Prefix: prefix, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return secret
}

// answer is a response's status and body.
type answer struct {
	status int
	body   string
}

func (e *env) call(method, path, body, key string) answer {
	e.t.Helper()
	resp := e.do(method, path, body, "Authorization: Bearer "+key)
	defer resp.Body.Close()
	return answer{resp.StatusCode, string(readAll(e.t, resp.Body))}
}

// notFoundAnswer is what any key gets for a response id it does not own:
// a 404 that says the same whether the id exists or not.
func notFoundAnswer(a answer, id string) string {
	return fmt.Sprintf("%d %s %s %s", a.status, gjson.Get(a.body, "error.type").Str, gjson.Get(a.body, "error.code").Str,
		strings.ReplaceAll(gjson.Get(a.body, "error.message").Str, id, "ID"))
}

// A response that a Responses upstream stored for one key is not
// continued, read, listed or deleted with another key: that key gets the
// answer an unknown id gets, and the upstream (one account for every key)
// never sees the id. An id the gateway never stored is refused too,
// unless the provider forwards unknown ids. On SQLite and PostgreSQL.
func TestResponsesTenancy(t *testing.T) {
	for name, db := range storetest.Open(t) {
		for _, forward := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/forward=%v", name, forward), func(t *testing.T) {
				up := storingUpstream(t)
				e := newEnvStore(t, `
providers:
  - { name: oair, type: openai-responses, base_url: "`+up.URL+`/v1", api_key: "`+upstreamKey+`", forward_unknown_response_ids: `+fmt.Sprint(forward)+` }
  - { name: closed, type: openai-responses, base_url: "`+up.URL+`/v1", api_key: "`+upstreamKey+`" }
models:
  - { name: codex, targets: [ { provider: oair, model: gpt-5-codex-2025-09-15 } ] }
  - { name: closed, targets: [ { provider: closed, model: gpt-5-codex-2025-09-15 } ] }
`, db)
				keyA, keyB := newKey(t, db, "a-"+fmt.Sprint(forward)), newKey(t, db, "b-"+fmt.Sprint(forward))
				first := e.call("POST", "/v1/responses", `{"model":"codex","input":"list files"}`, keyA)
				idA := gjson.Get(first.body, "id").Str
				if first.status != 200 || idA == "" {
					t.Fatalf("key A's first request: %d %s", first.status, first.body)
				}
				continues := func(model, id string) string {
					return `{"model":"` + model + `","previous_response_id":"` + id + `","input":"and then?"}`
				}
				for _, path := range []string{"/v1/responses", "/v1/responses/compact"} {
					if got := e.call("POST", path, continues("codex", "resp_never_stored"), keyB); forward {
						if got.status != 200 || up.Last().Path != path || gjson.GetBytes(up.Last().Body, "previous_response_id").Str != "resp_never_stored" {
							t.Errorf("%s, an unknown id with forward_unknown_response_ids: %d %s; upstream got %s", path, got.status, got.body, up.Last().Body)
						}
					} else if got.status != 404 || gjson.Get(got.body, "error.code").Str != "previous_response_not_found" {
						t.Errorf("%s, an unknown id: %d %s", path, got.status, got.body)
					}
				}
				sent := len(up.Requests())
				for _, tc := range []struct{ method, path, body string }{
					{"POST", "/v1/responses", continues("MODEL", "ID")},
					{"POST", "/v1/responses/input_tokens", continues("MODEL", "ID")},
					{"POST", "/v1/responses/compact", continues("MODEL", "ID")},
					{"GET", "/v1/responses/ID", ""},
					{"GET", "/v1/responses/ID/input_items", ""},
					{"DELETE", "/v1/responses/ID", ""},
				} {
					// Key B with A's id, and with an id never stored on a
					// provider that forwards none.
					fill := strings.NewReplacer("MODEL", "codex", "ID", idA)
					got := e.call(tc.method, fill.Replace(tc.path), fill.Replace(tc.body), keyB)
					fill = strings.NewReplacer("MODEL", "closed", "ID", "resp_never_stored")
					want := e.call(tc.method, fill.Replace(tc.path), fill.Replace(tc.body), keyB)
					if got.status != 404 || notFoundAnswer(got, idA) != notFoundAnswer(want, "resp_never_stored") {
						t.Errorf("key B %s %s: %d %s; an unknown id gets %d %s", tc.method, tc.path, got.status, got.body, want.status, want.body)
					}
				}
				if n := len(up.Requests()); n != sent {
					t.Errorf("key B's requests reached the upstream: %s", up.Last().Body)
				}
				// Key A continues its own, and counts it: the id goes to the
				// upstream that stored it.
				if got := e.call("POST", "/v1/responses/input_tokens", continues("codex", idA), keyA); got.status != 200 ||
					up.Last().Path != "/v1/responses/input_tokens" || gjson.GetBytes(up.Last().Body, "previous_response_id").Str != idA {
					t.Errorf("key A counting: %d %s; upstream got %s", got.status, got.body, up.Last().Body)
				}
				if got := e.call("POST", "/v1/responses", continues("codex", idA), keyA); got.status != 200 ||
					gjson.GetBytes(up.Last().Body, "previous_response_id").Str != idA {
					t.Errorf("key A continuing: %d %s; upstream got %s", got.status, got.body, up.Last().Body)
				}
				// And compacts it: the id goes to the upstream that stored it,
				// and the compacted window is not kept as a response.
				compacted := e.call("POST", "/v1/responses/compact", continues("codex", idA), keyA)
				if compacted.status != 200 || up.Last().Path != "/v1/responses/compact" || gjson.GetBytes(up.Last().Body, "previous_response_id").Str != idA {
					t.Errorf("key A compacting: %d %s; upstream got %s %s", compacted.status, compacted.body, up.Last().Path, up.Last().Body)
				}
				if got := e.call("GET", "/v1/responses/"+gjson.Get(compacted.body, "id").Str, "", keyA); got.status != 404 {
					t.Errorf("the compaction was kept: %d %s", got.status, got.body)
				}
				if got := e.call("GET", "/v1/responses/"+idA, "", keyA); got.status != 200 || gjson.Get(got.body, "id").Str != idA {
					t.Errorf("key A reading: %d %s", got.status, got.body)
				}
			})
		}
	}
}

// twoTargets configures two providers on one Responses upstream, models
// codex-1 and codex-2: a response one stored is not the other's to
// continue, so the other gets the conversation expanded.
func twoTargets(up *upstreamtest.Server) string {
	return `
providers:
  - { name: one, type: openai-responses, base_url: "` + up.URL + `/v1", api_key: "` + upstreamKey + `" }
  - { name: two, type: openai-responses, base_url: "` + up.URL + `/v1", api_key: "` + upstreamKey + `" }
models:
  - { name: codex-1, targets: [ { provider: one, model: gpt-5-codex-2025-09-15 } ] }
  - { name: codex-2, targets: [ { provider: two, model: gpt-5-codex-2025-09-15 } ] }
`
}

// A conversation of stored responses stores each turn's items once: 20
// turns store 20 turns' input, not the whole conversation again on each.
// A continuation that a target did not store itself is sent the whole
// conversation, expanded as it always was, and input_items lists it.
func TestResponsesChainStorage(t *testing.T) {
	const turns = 20
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			up := storingUpstream(t)
			// Two providers on one upstream: the turns alternate between
			// them, so none continues on the target that stored the
			// previous one, and each gets the conversation expanded.
			e := newEnvStore(t, twoTargets(up), db)
			var conv []string // the conversation's items, raw
			prev, inputBytes := "", 0
			for i := range turns {
				item := fmt.Sprintf(`{"role":"user","content":"turn %02d"}`, i)
				input := "[" + item + "]"
				inputBytes += len(input)
				body := `{"model":"codex-` + fmt.Sprint(1+i%2) + `","input":` + input
				if prev != "" {
					body += `,"previous_response_id":"` + prev + `"`
				}
				got := e.call("POST", "/v1/responses", body+"}", masterKey)
				if got.status != 200 {
					t.Fatalf("turn %d: %d %s", i, got.status, got.body)
				}
				conv = append(conv, item)
				sent := up.Last().Body
				if got, want := gjson.GetBytes(sent, "input").Raw, gjson.Get("["+strings.Join(conv, ",")+"]", "@ugly").Raw; got != want {
					t.Fatalf("turn %d: the upstream got the input\n%s\nwant\n%s", i, got, want)
				}
				if gjson.GetBytes(sent, "previous_response_id").Exists() {
					t.Fatalf("turn %d: the id went to a target that did not store it: %s", i, sent)
				}
				prev = gjson.Get(got.body, "id").Str
				for _, it := range gjson.Get(got.body, "output").Array() {
					conv = append(conv, it.Raw)
				}
			}
			var stored int
			if err := db.DB().QueryRowContext(context.Background(), "SELECT SUM(LENGTH(input)) FROM responses").Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if stored != inputBytes {
				t.Errorf("%d turns stored %d bytes of input items, want %d (each turn's once)", turns, stored, inputBytes)
			}
			// The last response's input items: the whole conversation
			// before its output, as the upstream got it.
			list := e.call("GET", "/v1/responses/"+prev+"/input_items?order=asc&limit=100", "", masterKey)
			items := gjson.Get(list.body, "data").Array()
			want := len(conv) - len(gjson.Get(e.call("GET", "/v1/responses/"+prev, "", masterKey).body, "output").Array())
			if list.status != 200 || len(items) != want || items[0].Get("content.0.text").Str != "turn 00" ||
				items[want-1].Get("content.0.text").Str != fmt.Sprintf("turn %02d", turns-1) {
				t.Errorf("input items: %d items, want %d: %.300s", len(items), want, list.body)
			}
		})
	}
}

// A pass-through stream that ends before its terminal event still made a
// response the upstream keeps: when the upstream cuts it, or the client
// leaves it, the gateway records the response as the key's, so that even
// a provider that forwards unknown ids does not forward it for another
// key.
func TestResponsesUnfinishedStreamOwned(t *testing.T) {
	transcript := upstreamtest.Events("responses_stream.sse")
	stored := gjson.GetBytes(transcript[0], "response.id").Str
	if !strings.HasPrefix(string(transcript[0]), "event: response.created") || stored == "" {
		t.Fatalf("the transcript does not begin with response.created: %.100s", transcript[0])
	}
	for name, db := range storetest.Open(t) {
		for _, leave := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/client_leaves=%v", name, leave), func(t *testing.T) {
				// Each case's response has an id of its own.
				id := fmt.Sprintf("resp_unfinished_%v", leave)
				var events [][]byte
				for _, ev := range transcript[:4] {
					events = append(events, bytes.ReplaceAll(ev, []byte(stored), []byte(id)))
				}
				var first atomic.Bool
				first.Store(true)
				up := upstreamtest.New(func(upstreamtest.Received) upstreamtest.Reply {
					if first.CompareAndSwap(true, false) {
						return upstreamtest.Reply{Events: events, Cut: !leave, Hang: leave}
					}
					return upstreamtest.Reply{Body: upstreamtest.File("responses.json")}
				})
				t.Cleanup(up.Close)
				e := newEnvStore(t, `
providers:
  - { name: oair, type: openai-responses, base_url: "`+up.URL+`/v1", api_key: "`+upstreamKey+`", forward_unknown_response_ids: true }
models:
  - { name: codex, targets: [ { provider: oair, model: gpt-5-codex-2025-09-15 } ] }
`, db)
				keyA, keyB := newKey(t, db, "a"), newKey(t, db, "b")
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "POST", e.gw.URL+"/v1/responses", strings.NewReader(`{"model":"codex","input":"list files","stream":true}`))
				req.Header.Set("Authorization", "Bearer "+keyA)
				resp, err := e.gw.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if leave {
					rd := bufio.NewReader(resp.Body)
					for line := ""; !strings.HasPrefix(line, "event: response.in_progress"); {
						if line, err = rd.ReadString('\n'); err != nil {
							t.Fatalf("reading the stream: %v", err)
						}
					}
					cancel()
					<-up.ClientGone()
				} else if body := readAll(t, resp.Body); !strings.Contains(string(body), id) {
					t.Fatalf("the cut stream: %.300s", body)
				}
				resp.Body.Close()
				// The response is kept as the request ends, which may come
				// after the client left.
				for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					got := e.call("GET", "/v1/responses/"+id, "", keyA)
					if got.status == 200 && gjson.Get(got.body, "status").Str != "completed" {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the key's own unfinished response: %d %.300s", got.status, got.body)
					}
				}
				sent := len(up.Requests())
				continues := `{"model":"codex","previous_response_id":"` + id + `","input":"go on"}`
				if got := e.call("POST", "/v1/responses", continues, keyB); got.status != 404 || len(up.Requests()) != sent {
					t.Errorf("another key continuing the unfinished response: %d %s; the upstream got %d requests", got.status, got.body, len(up.Requests())-sent)
				}
				if got := e.call("POST", "/v1/responses", continues, keyA); got.status != 200 || gjson.GetBytes(up.Last().Body, "previous_response_id").Str != id {
					t.Errorf("the key continuing its unfinished response: %d %.300s", got.status, got.body)
				}
			})
		}
	}
}

// oneTarget configures model codex on a Responses upstream, its provider
// forwarding ids the gateway never stored or not.
func oneTarget(up *upstreamtest.Server, forward bool) string {
	return `
providers:
  - { name: oair, type: openai-responses, base_url: "` + up.URL + `/v1", api_key: "` + upstreamKey + `", forward_unknown_response_ids: ` + fmt.Sprint(forward) + ` }
models:
  - { name: codex, targets: [ { provider: oair, model: gpt-5-codex-2025-09-15 } ] }
`
}

// Without a database the gateway knows no response: a previous_response_id
// is refused, not forwarded, unless the provider forwards unknown ids.
func TestResponsesNoStorePreviousID(t *testing.T) {
	for _, forward := range []bool{false, true} {
		up := storingUpstream(t)
		e := newEnvYAML(t, oneTarget(up, forward))
		got := e.call("POST", "/v1/responses", `{"model":"codex","previous_response_id":"resp_elsewhere","input":"go on"}`, masterKey)
		switch {
		case forward && (got.status != 200 || gjson.GetBytes(up.Last().Body, "previous_response_id").Str != "resp_elsewhere"):
			t.Errorf("forwarding: %d %s", got.status, got.body)
		case !forward && (got.status != 400 || !strings.Contains(got.body, "stores no responses") || len(up.Requests()) != 0):
			t.Errorf("not forwarding: %d %s; the upstream got %d requests", got.status, got.body, len(up.Requests()))
		}
	}
}

// A compaction continuing the key's response on a target that did not
// store it gets the conversation expanded in place of the id, as a
// request for a response does; its answer, which is no response, is
// relayed as it came (naming no response it continues).
func TestResponsesCompactExpanded(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			compaction := []byte(`{"id":"cmp_1","object":"response.compaction","created_at":1755500000,"output":[{"type":"compaction","encrypted_content":"gAAA"}],` +
				`"usage":{"input_tokens":90,"output_tokens":4,"total_tokens":94}}`)
			up := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
				if r.Path == "/v1/responses/compact" {
					return upstreamtest.Reply{Body: compaction}
				}
				return upstreamtest.Reply{Body: upstreamtest.File("responses.json")}
			})
			t.Cleanup(up.Close)
			e := newEnvStore(t, twoTargets(up), db)
			key := newKey(t, db, "a")
			first := e.call("POST", "/v1/responses", `{"model":"codex-1","input":[{"role":"user","content":"list files"}]}`, key)
			id := gjson.Get(first.body, "id").Str
			if first.status != 200 || id == "" {
				t.Fatalf("first request: %d %s", first.status, first.body)
			}
			got := e.call("POST", "/v1/responses/compact", `{"model":"codex-2","previous_response_id":"`+id+`","input":[{"role":"user","content":"and then?"}]}`, key)
			sent := up.Last()
			want := gjson.Get(`[{"role":"user","content":"list files"}]`, "@this").Array()
			want = append(want, gjson.Get(first.body, "output").Array()...)
			want = append(want, gjson.Parse(`{"role":"user","content":"and then?"}`))
			items := gjson.GetBytes(sent.Body, "input").Array()
			if got.status != 200 || got.body != string(compaction) || sent.Path != "/v1/responses/compact" ||
				gjson.GetBytes(sent.Body, "previous_response_id").Exists() || len(items) != len(want) {
				t.Fatalf("compacting on another target: %d %s; upstream got %s %s", got.status, got.body, sent.Path, sent.Body)
			}
			for i := range want {
				if items[i].Get("@ugly").Raw != want[i].Get("@ugly").Raw {
					t.Errorf("input item %d: %s, want %s", i, items[i].Raw, want[i].Raw)
				}
			}
		})
	}
}

// A conversation of OpenAI's Conversations API is the upstream account's:
// the gateway makes none, so a request naming one is refused with a 400
// in OpenAI's envelope, the upstream never called, unless the provider
// forwards ids the gateway never stored.
func TestResponsesConversationID(t *testing.T) {
	for _, forward := range []bool{false, true} {
		up := storingUpstream(t)
		e := newEnvYAML(t, oneTarget(up, forward))
		for _, path := range []string{"/v1/responses", "/v1/responses/compact", "/v1/responses/input_tokens"} {
			for _, conv := range []string{`"conv_operator"`, `{"id":"conv_operator"}`} {
				sent := len(up.Requests())
				got := e.call("POST", path, `{"model":"codex","conversation":`+conv+`,"input":"go on"}`, masterKey)
				if forward {
					if got.status != 200 || up.Last().Path != path || gjson.GetBytes(up.Last().Body, "conversation").Raw != conv {
						t.Errorf("forwarding %s to %s: %d %s; upstream got %s", conv, path, got.status, got.body, up.Last().Body)
					}
					continue
				}
				if got.status != 400 || gjson.Get(got.body, "error.type").Str != "invalid_request_error" ||
					gjson.Get(got.body, "error.param").Str != "conversation" || !strings.Contains(gjson.Get(got.body, "error.message").Str, "keeps no conversations") ||
					len(up.Requests()) != sent {
					t.Errorf("%s to %s: %d %s; the upstream got %d requests", conv, path, got.status, got.body, len(up.Requests())-sent)
				}
			}
		}
		// A null conversation names none.
		if got := e.call("POST", "/v1/responses", `{"model":"codex","conversation":null,"input":"go on"}`, masterKey); got.status != 200 {
			t.Errorf("forward=%v, a null conversation: %d %s", forward, got.status, got.body)
		}
	}
}
