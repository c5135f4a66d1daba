package translate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/tools/txtar"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/sse"
)

var update = flag.Bool("update", false, "rewrite the want sections of golden files")

// A golden case is a txtar file in testdata named a2o_*.txtar (Anthropic
// client, OpenAI upstream) or o2a_*.txtar (OpenAI client, Anthropic
// upstream), with sections:
//
//	caps.json          optional Caps (Go field names)
//	request.json       the client's request
//	want_upstream.json the translated request, or
//	want_error         the expected RequestError message
//	want_headers       optional: tollgate-dropped-params / -adjusted-params lines
//	upstream.json      optional: the upstream's answer → want_response.json
//	upstream.sse       optional: the upstream's stream → want.sse
//
// Random ids in outputs are replaced by stable placeholders before
// comparing.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runGolden(t, file)
		})
	}
}

var (
	randomMsgID  = regexp.MustCompile(`"msg_[0-9A-Za-z]{24}"`)
	randomToolID = regexp.MustCompile(`"toolu_[0-9a-f]{24}"`)
)

func normalize(b []byte) []byte {
	b = randomMsgID.ReplaceAll(b, []byte(`"msg_RANDOM"`))
	return randomToolID.ReplaceAll(b, []byte(`"toolu_RANDOM"`))
}

func section(a *txtar.Archive, name string) ([]byte, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

func setSection(a *txtar.Archive, name string, data []byte) {
	for i, f := range a.Files {
		if f.Name == name {
			a.Files[i].Data = data
			return
		}
	}
	a.Files = append(a.Files, txtar.File{Name: name, Data: data})
}

// pretty re-indents JSON for readable golden files and stable diffs.
func pretty(t *testing.T, b []byte) []byte {
	t.Helper()
	v := jsontext.Value(bytes.Clone(b))
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return append(v, '\n')
}

var goldenSigner = NewSigner([]byte("golden-test-key"))

const goldenCreated = 1700000000

func runGolden(t *testing.T, file string) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	a2o := strings.HasPrefix(filepath.Base(file), "a2o_")
	var caps Caps
	if c, ok := section(a, "caps.json"); ok {
		if err := jsonx.Unmarshal(c, &caps); err != nil {
			t.Fatalf("caps.json: %v", err)
		}
	}
	reqBody, ok := section(a, "request.json")
	if !ok {
		t.Fatal("no request.json")
	}
	var upstreamReq any
	var plan *Plan
	if a2o {
		var in anthropic.MessagesRequest
		if err := jsonx.Unmarshal(reqBody, &in); err != nil {
			t.Fatalf("request.json: %v", err)
		}
		upstreamReq, plan, err = MessagesToChat(&in, "upstream-model", caps, PolicyDefault, goldenSigner)
	} else {
		var in openai.ChatRequest
		if err := jsonx.Unmarshal(reqBody, &in); err != nil {
			t.Fatalf("request.json: %v", err)
		}
		upstreamReq, plan, err = ChatToMessages(&in, "upstream-model", caps, PolicyDefault, goldenSigner)
	}
	changed := false
	check := func(name string, got []byte) {
		t.Helper()
		want, ok := section(a, name)
		if *update {
			if !ok || !bytes.Equal(want, got) {
				setSection(a, name, got)
				changed = true
			}
			return
		}
		if !ok {
			t.Errorf("missing section %s; got:\n%s", name, got)
			return
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s differs:\n--- got\n%s--- want\n%s", name, got, want)
		}
	}
	if err != nil {
		check("want_error", []byte(err.Error()+"\n"))
	} else {
		b, merr := jsonx.Marshal(upstreamReq)
		if merr != nil {
			t.Fatal(merr)
		}
		check("want_upstream.json", normalize(pretty(t, b)))
		if _, ok := section(a, "want_headers"); ok || len(plan.dropped)+len(plan.adjusted) > 0 {
			var h bytes.Buffer
			if len(plan.dropped) > 0 {
				h.WriteString("tollgate-dropped-params: " + strings.Join(plan.dropped, ",") + "\n")
			}
			if len(plan.adjusted) > 0 {
				h.WriteString("tollgate-adjusted-params: " + strings.Join(plan.adjusted, ",") + "\n")
			}
			check("want_headers", h.Bytes())
		}
	}
	if up, ok := section(a, "upstream.json"); ok && plan != nil {
		check("want_response.json", normalize(pretty(t, translateResponse(t, a2o, up, plan))))
	}
	if up, ok := section(a, "upstream.sse"); ok && plan != nil {
		got := translateStream(t, a2o, up, plan, len(up))
		check("want.sse", normalize(got))
		if a2o {
			checkAnthropicGrammar(t, got)
		} else {
			checkOpenAIGrammar(t, got, plan.IncludeUsage)
		}
		// The same output wherever the network splits the upstream bytes.
		for n := 1; n < len(up) && !*update; n++ {
			if split := translateStream(t, a2o, up, plan, n); !bytes.Equal(normalize(split), normalize(got)) {
				t.Fatalf("output differs when the upstream arrives in pieces of %d bytes:\n%s", n, split)
			}
		}
	}
	if changed {
		if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func translateResponse(t *testing.T, a2o bool, up []byte, plan *Plan) []byte {
	t.Helper()
	if a2o {
		var c openai.Completion
		if err := jsonx.Unmarshal(up, &c); err != nil {
			t.Fatalf("upstream.json: %v", err)
		}
		r, _, err := ChatResponseToMessages(&c, plan)
		if err != nil {
			return []byte(`{"translation_error":` + string(jsonx.AppendQuote(nil, err.Error())) + `}`)
		}
		b, _ := jsonx.Marshal(r)
		return b
	}
	var r anthropic.Response
	if err := jsonx.Unmarshal(up, &r); err != nil {
		t.Fatalf("upstream.json: %v", err)
	}
	c, _ := MessagesResponseToChat(&r, plan, goldenCreated)
	b, _ := jsonx.Marshal(c)
	return b
}

// stream is what the gateway drives: feed events, then close.
type stream interface {
	Feed(ev []byte) []byte
	Close(eof bool, msg string) ([]byte, bool)
	StartError(ev []byte) (int, []byte, bool)
}

// translateStream feeds the upstream bytes in pieces of n bytes, splitting
// events as the gateway does, and returns the client bytes. A final
// "-- upstream.sse --" without a trailing blank line ends in a cut.
func translateStream(t *testing.T, a2o bool, up []byte, plan *Plan, n int) []byte {
	t.Helper()
	p := *plan
	var s stream
	if a2o {
		s = NewChatToMessagesStream(&p)
	} else {
		s = NewMessagesToChatStream(&p, goldenCreated)
	}
	var out, buf []byte
	first := true
	for i := 0; i < len(up); i += n {
		buf = append(buf, up[i:min(i+n, len(up))]...)
		for {
			k := sse.Split(buf)
			if k == 0 {
				break
			}
			ev := buf[:k]
			if first {
				var f sse.Fields
				f.Parse(ev)
				if f.Data != nil {
					first = false
					if status, body, isErr := s.StartError(ev); isErr {
						return []byte("HTTP " + strconv.Itoa(status) + "\n" + string(body) + "\n")
					}
				}
			}
			// Feed a copy and clobber it afterwards, as the gateway's relay
			// reuses its read buffer: state kept past Feed must not alias it.
			scratch := append([]byte(nil), ev...)
			out = append(out, s.Feed(scratch)...)
			for i := range scratch {
				scratch[i] = 'X'
			}
			buf = buf[k:]
		}
	}
	tail, _ := s.Close(true, "upstream stream ended before its final event")
	return append(out, tail...)
}
