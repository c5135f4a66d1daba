package storedresponses

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/sse"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// The targets of the turn tests: the one that stored the response, another
// pass-through one, one that forwards unknown ids, and a translated one.
var (
	storedOn   = dialect.AttemptTarget{Name: "oair/gpt", Passthrough: true}
	otherPass  = dialect.AttemptTarget{Name: "other/gpt", Passthrough: true}
	forwarding = dialect.AttemptTarget{Name: "fwd/gpt", Passthrough: true, ForwardUnknownIDs: true}
	translated = dialect.AttemptTarget{Name: "ant/claude"}
)

// A compaction and a count name a previous response under the rules a
// request for a response does: another key's id and an id never stored
// are not found (the latter forwarded only where unknown ids are), and
// the owner's goes to the target that stored it, expanded into the
// conversation for any other. A conversation id, which the gateway never
// makes, goes only where unknown ids are forwarded. Only a request for a
// response reads its answer.
func TestTurnResponseReferences(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			now := clock.Now()
			if err := db.PutResponse(context.Background(), store.Response{ID: "resp_a", Owner: "key-a", Model: "codex",
				Target: storedOn.Name, UpstreamStored: true, Input: []byte(`[{"role":"user","content":"list files"}]`),
				Response:  []byte(`{"id":"resp_a","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]}]}`),
				CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			h := New(Options{Store: db})
			const (
				refused    = "404"
				badRequest = "400"
				forwarded  = "forwarded"
				expanded   = "expanded"
			)
			for opName, op := range map[string]dialect.Op{"generate": dialect.Generate, "count": dialect.CountTokens, "compact": dialect.Compact} {
				for _, tc := range []struct {
					name, owner, body string
					target            dialect.AttemptTarget
					want              string
				}{
					{"another key's id", "key-b", `{"previous_response_id":"resp_a","input":"go on"}`, storedOn, refused},
					{"another key's id, forwarding", "key-b", `{"previous_response_id":"resp_a","input":"go on"}`, forwarding, refused},
					{"the master key and a key's id", "", `{"previous_response_id":"resp_a","input":"go on"}`, storedOn, refused},
					{"an unknown id", "key-b", `{"previous_response_id":"resp_nowhere","input":"go on"}`, storedOn, refused},
					{"an unknown id, translated", "key-b", `{"previous_response_id":"resp_nowhere","input":"go on"}`, translated, refused},
					{"an unknown id, forwarding", "key-b", `{"previous_response_id":"resp_nowhere","input":"go on"}`, forwarding, forwarded},
					{"the owner, where stored", "key-a", `{"previous_response_id":"resp_a","input":"go on"}`, storedOn, forwarded},
					{"the owner, elsewhere", "key-a", `{"previous_response_id":"resp_a","input":"go on"}`, otherPass, expanded},
					{"the owner, translated", "key-a", `{"previous_response_id":"resp_a","input":"go on"}`, translated, expanded},
					{"a conversation", "key-a", `{"conversation":"conv_1","input":"go on"}`, storedOn, badRequest},
					{"a conversation object", "key-a", `{"conversation":{"id":"conv_1"},"input":"go on"}`, otherPass, badRequest},
					{"a conversation, translated", "key-a", `{"conversation":"conv_1","input":"go on"}`, translated, badRequest},
					{"a conversation, forwarding", "key-a", `{"conversation":"conv_1","input":"go on"}`, forwarding, forwarded},
					{"a null conversation", "key-a", `{"conversation":null,"input":"go on"}`, storedOn, forwarded},
				} {
					body := []byte(tc.body)
					s, err := dialect.Scan(body, &dialect.Responses.Fields)
					if err != nil {
						t.Fatal(err)
					}
					r := &dialect.TurnRequest{Op: op, Body: body, Scan: s, Owner: tc.owner, Model: "codex"}
					got, sent, keeps := "", "", false
					turn, err := h.Begin(context.Background(), r)
					if err == nil && turn != nil {
						var a dialect.AttemptBody
						a, err = turn.Attempt(tc.target)
						sent, keeps = string(a.Body), turn.Keeps()
					}
					var ref *dialect.Refusal
					switch {
					case errors.As(err, &ref):
						got = fmt.Sprint(ref.Status)
						if ref.Param == "" || ref.Message == "" || ref.Status == 404 && ref.Code != "previous_response_not_found" {
							t.Errorf("%s, %s: refusal %+v", opName, tc.name, ref)
						}
					case err != nil:
						t.Fatalf("%s, %s: %v", opName, tc.name, err)
					case turn == nil || sent == tc.body:
						got = forwarded
					case gjson.Get(sent, "previous_response_id").Exists() ||
						gjson.Get(sent, "input.#.content|@ugly").Raw != `["list files",[{"type":"output_text","text":"a.txt"}],"go on"]`:
						got = "changed: " + sent
					default:
						got = expanded
					}
					if got != tc.want {
						t.Errorf("%s, %s: %s, want %s", opName, tc.name, got, tc.want)
					}
					// Only a request for a response reads its answer: a
					// count and a compaction answer none to keep or name.
					if keeps && op != dialect.Generate {
						t.Errorf("%s, %s: the turn reads the answer", opName, tc.name)
					}
				}
			}
		})
	}
}

// The requests of a stored conversation are one session: the id of its
// first response, which a request that starts one has once its answer is
// stored, and every request that continues it (from any response of it,
// with or without storing its own, after its start was deleted) has from
// the start. A session the client names outranks it.
func TestTurnSession(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			h := New(Options{Store: db})
			ctx := context.Background()
			// ask begins a request with body, checks its session before and
			// after the answer (the response with id answer; "" for none),
			// and returns the turn.
			ask := func(body, answer, before, after string) dialect.Turn {
				t.Helper()
				s, err := dialect.Scan([]byte(body), &dialect.Responses.Fields)
				if err != nil {
					t.Fatal(err)
				}
				turn, err := h.Begin(ctx, &dialect.TurnRequest{Op: dialect.Generate, Body: []byte(body), Scan: s, Owner: "key-a", Model: "gpt"})
				if err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				if turn == nil {
					t.Fatalf("%s: no turn", body)
				}
				st, ok := turn.(dialect.SessionTurn)
				if !ok {
					t.Fatal("the turn has no session")
				}
				if got := st.Session(""); got != before {
					t.Errorf("%s: session %q before the answer, want %q", body, got, before)
				}
				if _, err := turn.Attempt(translated); err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				if answer != "" {
					turn.Answer([]byte(`{"id":"`+answer+`","object":"response","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`), false)
				}
				if got := st.Session(""); got != after {
					t.Errorf("%s: session %q, want %q", body, got, after)
				}
				if got := st.Session("named-1"); got != "named-1" {
					t.Errorf("%s: a named session is %q", body, got)
				}
				return turn
			}
			ask(`{"model":"gpt","input":"one"}`, "resp_1", "", "resp_1")
			ask(`{"model":"gpt","previous_response_id":"resp_1","input":"two"}`, "resp_2", "resp_1", "resp_1")
			ask(`{"model":"gpt","previous_response_id":"resp_2","input":"three","store":false}`, "resp_3", "resp_1", "resp_1")
			ask(`{"model":"gpt","previous_response_id":"resp_1","input":"a branch"}`, "resp_4", "resp_1", "resp_1")
			// The start is deleted: it is hidden, kept for the
			// conversations that continue it.
			if err := db.DeleteResponse(ctx, "resp_1", "key-a"); err != nil {
				t.Fatal(err)
			}
			ask(`{"model":"gpt","previous_response_id":"resp_2","input":"four"}`, "resp_5", "resp_1", "resp_1")
			// Another conversation.
			ask(`{"model":"gpt","input":"other"}`, "resp_9", "", "resp_9")
			ask(`{"model":"gpt","previous_response_id":"resp_9","input":"go on"}`, "", "resp_9", "resp_9")
			// A response that was not stored starts none.
			ask(`{"model":"gpt","input":"x"}`, "", "", "")

			// A stream's response is stored at its terminal event.
			body := []byte(`{"model":"gpt","input":"streamed","stream":true}`)
			sc, err := dialect.Scan(body, &dialect.Responses.Fields)
			if err != nil {
				t.Fatal(err)
			}
			turn, err := h.Begin(ctx, &dialect.TurnRequest{Op: dialect.Generate, Body: body, Scan: sc, Owner: "key-a", Model: "gpt"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Attempt(translated); err != nil {
				t.Fatal(err)
			}
			tap := turn.Stream(relayTap{})
			tap.Feed(sse.AppendEvent(nil, "response.completed", []byte(`{"type":"response.completed","response":{"id":"resp_s","output":[]}}`)))
			turn.Ended()
			if got := turn.(dialect.SessionTurn).Session(""); got != "resp_s" {
				t.Errorf("streamed: session %q, want resp_s", got)
			}

			// A long or odd id is bounded.
			long := strings.Repeat("r", dialect.MaxSessionID+1)
			ask(`{"model":"gpt","input":"long"}`, long, "", dialect.SessionID(long))
		})
	}
}
