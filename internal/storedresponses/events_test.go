package storedresponses

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts under testdata/")

// relayTap hands every event on as it is, as a pass-through tap does.
type relayTap struct{}

func (relayTap) Feed(ev []byte) []byte                 { return ev }
func (relayTap) StartError([]byte) (int, []byte, bool) { return 0, nil, false }
func (relayTap) Close(bool, string) ([]byte, bool)     { return nil, true }
func (relayTap) Usage() meter.Usage                    { return meter.Usage{} }

// keptStore records what is stored.
type keptStore struct {
	Store
	kept []store.Response
}

func (k *keptStore) PutResponse(_ context.Context, r store.Response) error {
	k.kept = append(k.kept, r)
	return nil
}

func (k *keptStore) PurgeResponses(context.Context, time.Time) (int64, error) { return 0, nil }

func TestEcho(t *testing.T) {
	for _, tc := range []struct{ name, body, prev, want string }{
		{"null", `{"id":"r","previous_response_id":null,"output":[]}`, "resp_p", `{"id":"r","previous_response_id":"resp_p","output":[]}`},
		{"missing", `{"id":"r","output":[]}`, "resp_p", `{"id":"r","output":[],"previous_response_id":"resp_p"}`},
		{"named", `{"id":"r","previous_response_id":"resp_up"}`, "resp_p", `{"id":"r","previous_response_id":"resp_up"}`},
		{"none continued", `{"id":"r","previous_response_id":null}`, "", `{"id":"r","previous_response_id":null}`},
		{"not an object", `[1,2]`, "resp_p", `[1,2]`},
	} {
		if got := string(echo([]byte(tc.body), tc.prev)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A pass-through stream continuing a response: every lifecycle event's
// response names it, every other event is relayed byte for byte (the
// golden transcript), and the terminal response is kept as the client
// gets it.
func TestStoringTapEchoes(t *testing.T) {
	var kept [][]byte
	tap := &storingTap{Tap: relayTap{}, prevID: "resp_prev", keep: func(r []byte) { kept = append(kept, bytes.Clone(r)) }}
	var out []byte
	for _, ev := range upstreamtest.Events("responses_stream.sse") {
		out = append(out, tap.Feed(ev)...)
	}
	tail, _ := tap.Close(true, "")
	out = append(out, tail...)
	golden := "testdata/echoed_stream.sse"
	if *update {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("the stream differs from %s (go test -update rewrites it):\n%s", golden, out)
	}
	if len(kept) != 1 || gjson.GetBytes(kept[0], "previous_response_id").Str != "resp_prev" || gjson.GetBytes(kept[0], "status").Str != "completed" {
		t.Errorf("kept %q", kept)
	}
	// What the upstream sent, but for the id, is what the client got.
	if got, sent := bytes.ReplaceAll(out, []byte(`"previous_response_id":"resp_prev"`), []byte(`"previous_response_id":null`)),
		upstreamtest.File("responses_stream.sse"); !bytes.Equal(got, sent) {
		t.Errorf("more than the id changed")
	}
}

// A stream that ends before its terminal event keeps the response it
// began, when a pass-through upstream stored it too.
func TestEndedKeepsUnfinished(t *testing.T) {
	for _, upstreamStored := range []bool{false, true} {
		db := &keptStore{}
		st := &turn{h: New(Options{Store: db}), ctx: context.Background(), store: true, upstreamStored: upstreamStored}
		tap := st.Stream(relayTap{})
		for _, ev := range upstreamtest.Events("responses_stream.sse")[:4] {
			tap.Feed(ev)
		}
		st.Ended()
		if got := len(db.kept) == 1 && gjson.GetBytes(db.kept[0].Response, "status").Str == "in_progress"; got != upstreamStored {
			t.Errorf("upstreamStored=%v: kept %d responses", upstreamStored, len(db.kept))
		}
	}
}

func TestTerminalResponse(t *testing.T) {
	all := upstreamtest.File("responses_stream.sse")
	if r := terminalResponse(all); gjson.GetBytes(r, "status").Str != "completed" {
		t.Errorf("terminal response: %.200s", r)
	}
	cut := bytes.Join(upstreamtest.Events("responses_stream.sse")[:5], nil)
	if r := terminalResponse(cut); r != nil {
		t.Errorf("a cut stream's terminal response: %.200s", r)
	}
}

// Scanning what a scan returned changes nothing more, and without an id
// to name nothing changes at all, whatever the bytes.
func FuzzEventScanner(f *testing.F) {
	f.Add(upstreamtest.File("responses_stream.sse"), "resp_p")
	f.Add([]byte("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n"), "resp_p")
	f.Add([]byte("data: {\"type\":\"response.failed\",\"response\":[1]}\r\n\r\ndata: {\"response\"}\n\n"), "x")
	f.Fuzz(func(t *testing.T, events []byte, prev string) {
		var s eventScanner
		if out := s.scan(bytes.Clone(events), "", nil); !bytes.Equal(out, events) {
			t.Fatalf("without an id the bytes changed:\n%q\n%q", events, out)
		}
		once := bytes.Clone(s.scan(events, prev, nil))
		var s2 eventScanner
		if twice := s2.scan(once, prev, nil); !bytes.Equal(twice, once) {
			t.Fatalf("a second scan changed the bytes:\n%q\n%q", once, twice)
		}
	})
}

// BenchmarkStoringTap is the cost of the stream wrapper per upstream
// event: of a stored stream, and of one that also names the response it
// continues (its lifecycle events rewritten).
func BenchmarkStoringTap(b *testing.B) {
	events := upstreamtest.Events("responses_stream.sse")
	for _, prev := range []string{"", "resp_prev"} {
		b.Run("continues="+strconv.FormatBool(prev != ""), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tap := &storingTap{Tap: relayTap{}, prevID: prev, keep: func([]byte) {}}
				for _, ev := range events {
					tap.Feed(ev)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
	}
}
