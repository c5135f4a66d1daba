package dialect

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse/ssetest"
)

// tapStreams are upstream streams of each dialect with a tap, from the
// translator's golden files (by their pair prefix: m2c is a Messages
// client on a Chat Completions upstream, so its upstream.sse is Chat's), whole
// and cut after their first event, with hideUsage for OpenAI's both ways.
func tapStreams(tb testing.TB) (names []string, taps []func() Tap, streams [][]byte) {
	upstreams := []struct {
		prefixes []string
		taps     map[string]func() Tap
	}{
		{[]string{"c2m", "r2m"}, map[string]func() Tap{"anthropic": func() Tap { return Messages.NewTap(false) }}},
		{[]string{"m2c", "r2c"}, map[string]func() Tap{"openai": func() Tap { return Chat.NewTap(false) }, "openai-hide-usage": func() Tap { return Chat.NewTap(true) }}},
		{[]string{"c2r", "m2r"}, map[string]func() Tap{"responses": func() Tap { return Responses.NewTap(false) }}},
	}
	for _, u := range upstreams {
		for _, prefix := range u.prefixes {
			files, _ := filepath.Glob("../translate/testdata/" + prefix + "_*.txtar")
			for _, file := range files {
				a, err := txtar.ParseFile(file)
				if err != nil {
					tb.Fatal(err)
				}
				for _, f := range a.Files {
					if f.Name != "upstream.sse" {
						continue
					}
					// Each whole, and cut after its first event: a cut stream's
					// end is made of what the tap kept of the events before.
					base := strings.TrimSuffix(filepath.Base(file), ".txtar")
					variants := map[string][]byte{base: f.Data}
					if k := bytes.Index(f.Data, []byte("\n\n")); k > 0 && k+2 < len(f.Data) {
						variants[base+"/cut"] = f.Data[:k+2]
					}
					for v, data := range variants {
						for name, tap := range u.taps {
							names = append(names, name+"/"+v)
							taps = append(taps, tap)
							streams = append(streams, data)
						}
					}
				}
			}
		}
	}
	if len(streams) == 0 {
		tb.Fatal("no golden streams")
	}
	return names, taps, streams
}

// tapRun is what a tap made of a stream: the client's bytes, how it
// ended, the usage it read.
type tapRun struct {
	out   []byte
	clean bool
	usage meter.Usage
}

// runTap drives a tap over up as the gateway's relay does, reading in the
// pieces next gives through ssetest.Replay (poisoned or not).
func runTap(tap Tap, up []byte, next func() int, poisoned bool) tapRun {
	var r tapRun
	first, failed := true, false
	ssetest.Replay(up, next, poisoned, func(ev []byte) bool {
		if first && bytes.Contains(ev, []byte("data:")) {
			first = false
			if status, body, isErr := tap.StartError(ev); isErr {
				r.out, failed = fmt.Appendf(nil, "HTTP %d\n%s\n", status, body), true
				return false
			}
		}
		r.out = append(r.out, tap.Feed(ev)...)
		return true
	})
	if !failed {
		var tail []byte
		tail, r.clean = tap.Close(true, "upstream stream ended before its final event")
		r.out = append(r.out, tail...)
	}
	r.usage = tap.Usage()
	return r
}

// Every pass-through tap gives the same client bytes, end and usage for
// a stream whatever pieces it arrives in, read through one reused buffer
// overwritten after every call: no tap keeps a view into it.
func TestTapsOwnWhatTheyKeep(t *testing.T) {
	names, taps, streams := tapStreams(t)
	for i, up := range streams {
		t.Run(names[i], func(t *testing.T) {
			want := runTap(taps[i](), up, ssetest.Pieces(len(up)), false)
			sizes := []int{1, 2, 3, 5, 7, 16, 64}
			if !testing.Short() {
				sizes = sizes[:0]
				for n := 1; n <= len(up); n++ {
					sizes = append(sizes, n)
				}
			}
			for _, n := range sizes {
				if got := runTap(taps[i](), up, ssetest.Pieces(n), true); !bytes.Equal(got.out, want.out) || got.clean != want.clean || got.usage != want.usage {
					t.Fatalf("in pieces of %d bytes through a poisoned buffer: clean %v usage %+v\n%s\nwant clean %v usage %+v\n%s",
						n, got.clean, got.usage, got.out, want.clean, want.usage, want.out)
				}
			}
		})
	}
}

// FuzzTapChunkings: any stream (seeded with the golden ones, picked by
// which for its tap), read in the pieces cuts describes through a
// poisoned buffer, gives what it gives read whole through a clean one.
func FuzzTapChunkings(f *testing.F) {
	names, taps, streams := tapStreams(f)
	for i, up := range streams {
		f.Add(uint16(i), up, []byte{1})
		f.Add(uint16(i), up, []byte{9, 2, 130})
	}
	f.Fuzz(func(t *testing.T, which uint16, up, cuts []byte) {
		k := int(which) % len(streams)
		want := runTap(taps[k](), up, ssetest.Pieces(len(up)+1), false)
		i := 0
		next := func() int {
			if len(cuts) == 0 {
				return 1
			}
			i++
			return int(cuts[(i-1)%len(cuts)])
		}
		if got := runTap(taps[k](), up, next, true); !bytes.Equal(got.out, want.out) || got.clean != want.clean || got.usage != want.usage {
			t.Fatalf("%s in pieces %v: %q %v %+v, want %q %v %+v", names[k], cuts, got.out, got.clean, got.usage, want.out, want.clean, want.usage)
		}
	})
}
