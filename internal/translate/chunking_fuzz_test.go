package translate

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// goldenStream is one golden file's stream: its pair, the client's
// request and the upstream's bytes.
type goldenStream struct {
	name string
	pair goldenPair
	req  []byte
	caps Caps
	up   []byte
}

// goldenStreams lists every golden file with an upstream stream, of every
// pair, in file order.
func goldenStreams(tb testing.TB) []goldenStream {
	files, _ := filepath.Glob("testdata/*.txtar")
	var out []goldenStream
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		up, ok := section(a, "upstream.sse")
		if !ok {
			continue
		}
		prefix, _, _ := strings.Cut(filepath.Base(file), "_")
		g := goldenStream{name: filepath.Base(file), pair: goldenPairs[prefix], up: up}
		g.req, _ = section(a, "request.json")
		if c, ok := section(a, "caps.json"); ok {
			if err := jsonx.Unmarshal(c, &g.caps); err != nil {
				tb.Fatalf("%s: caps.json: %v", file, err)
			}
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		tb.Fatal("no golden streams")
	}
	return out
}

// randomChatID is the id a Chat stream makes up when its upstream gave none.
var randomChatID = regexp.MustCompile(`"chatcmpl-[0-9A-Za-z]{24}"`)

// normalizeAll is normalize, and a made-up chat completion id replaced too.
func normalizeAll(b []byte) []byte {
	return randomChatID.ReplaceAll(normalize(b), []byte(`"chatcmpl-RANDOM"`))
}

// FuzzStreamChunkings feeds an upstream stream, of any pair (which picks
// the golden file whose request plans it; the fuzzer changes its bytes),
// in the pieces cuts describes through one reused read buffer poisoned
// after every call, and wants byte for byte what the same bytes give in
// one piece through a buffer never overwritten: no stream machine keeps a
// view into a buffer it does not own, wherever the reads fall.
func FuzzStreamChunkings(f *testing.F) {
	streams := goldenStreams(f)
	for i, g := range streams {
		f.Add(uint16(i), g.up, []byte{1})
		f.Add(uint16(i), g.up, []byte{7, 3, 200, 1, 64})
	}
	f.Fuzz(func(t *testing.T, which uint16, up, cuts []byte) {
		g := streams[int(which)%len(streams)]
		_, plan, err := g.pair.request(t, g.req, g.caps)
		if err != nil || plan == nil {
			return
		}
		whole := feedStream(t, g.pair, up, plan, func() int { return len(up) }, false)
		i := 0
		next := func() int {
			if len(cuts) == 0 {
				return 1
			}
			n := int(cuts[i%len(cuts)])
			i++
			return n
		}
		split := feedStream(t, g.pair, up, plan, next, true)
		if !bytes.Equal(normalizeAll(split), normalizeAll(whole)) {
			t.Fatalf("%s: the stream read in pieces %v through a poisoned buffer differs:\n--- pieces\n%s\n--- whole\n%s", g.name, cuts, split, whole)
		}
	})
}
