package formdata

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"strings"
	"testing"
)

// part is one part of a test form.
type part struct {
	header textproto.MIMEHeader
	body   string
}

func field(name, value string) part {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+name+`"`)
	return part{h, value}
}

func file(name, filename, ctype, body string) part {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+name+`"; filename="`+filename+`"`)
	h.Set("Content-Type", ctype)
	return part{h, body}
}

const testBoundary = "XyZzY-boundary"

// encode writes parts as a client would.
func encode(t testing.TB, parts ...part) string {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if err := mw.SetBoundary(testBoundary); err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		w, err := mw.CreatePart(p.header)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, p.body)
	}
	mw.Close()
	return b.String()
}

// decodeParts parses a body back, raw, as an upstream would see it.
func decodeParts(t testing.TB, body io.Reader, boundary string) ([]part, error) {
	t.Helper()
	mr := multipart.NewReader(body, boundary)
	var out []part
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return out, err
		}
		out = append(out, part{p.Header, string(b)})
	}
}

func TestBoundaryOf(t *testing.T) {
	tests := []struct {
		ct, want string
		bad      bool
	}{
		{`multipart/form-data; boundary=abc`, "abc", false},
		{`Multipart/Form-Data; boundary="a b:c"`, "a b:c", false},
		{`multipart/form-data`, "", true},
		{`application/json`, "", true},
		{`multipart/mixed; boundary=abc`, "", true},
		{``, "", true},
	}
	for _, tc := range tests {
		got, err := BoundaryOf(tc.ct)
		var fe *Error
		if tc.bad != errors.As(err, &fe) || got != tc.want {
			t.Errorf("BoundaryOf(%q) = %q, %v", tc.ct, got, err)
		}
	}
}

func TestRead(t *testing.T) {
	audio := strings.Repeat("\x00\xffRIFF\r\n--", 1000) // 10 KB, with CRLF and dashes
	tests := []struct {
		name   string
		body   string
		want   string
		lim    Limits
		value  string
		found  bool
		fields int   // len(Fields()) after Read
		known  bool  // Len is known
		spill  bool  // a spill file exists after Read
		err    error // an *Error expected when non-nil
	}{
		{name: "field first", body: encode(t, field("model", "whisper-1"), file("file", "a.mp3", "audio/mpeg", audio), field("language", "en")),
			want: "model", value: "whisper-1", found: true, fields: 1, lim: Limits{Memory: 100}},
		{name: "field after file", body: encode(t, file("file", "a.mp3", "audio/mpeg", audio), field("model", "whisper-1")),
			want: "model", value: "whisper-1", found: true, fields: 1, known: true, spill: true, lim: Limits{Memory: 100}},
		{name: "field after file in memory", body: encode(t, file("file", "a.mp3", "audio/mpeg", audio), field("model", "whisper-1")),
			want: "model", value: "whisper-1", found: true, fields: 1, known: true},
		{name: "field absent", body: encode(t, file("file", "a.mp3", "audio/mpeg", audio), field("language", "en")),
			want: "model", fields: 1, known: true},
		{name: "empty form", body: "--" + testBoundary + "--\r\n", want: "model", known: true},
		{name: "several files", body: encode(t, file("image", "a.png", "image/png", audio), file("image", "b.png", "image/png", audio[:77]),
			file("mask", "m.png", "image/png", ""), field("prompt", "a cat"), field("model", "gpt-image-1"), field("n", "2")),
			want: "model", value: "gpt-image-1", found: true, fields: 2, spill: true, lim: Limits{Memory: 5000}},
		{name: "a file named model is refused (an upstream would take it for the field)", body: encode(t, file("model", "m.bin", "application/octet-stream", "x"), field("model", "m")),
			want: "model", err: &Error{Param: "model"}},
		{name: "empty filename is a file, and a file cannot be the wanted field", body: encode(t, file("model", "", "application/octet-stream", "x")),
			want: "model", err: &Error{Param: "model"}},
		{name: "field over MaxField", body: encode(t, field("prompt", strings.Repeat("p", 101)), field("model", "m")),
			want: "model", lim: Limits{MaxField: 100}, err: &Error{Param: "prompt"}},
		{name: "field at MaxField", body: encode(t, field("prompt", strings.Repeat("p", 100)), field("model", "m")),
			want: "model", lim: Limits{MaxField: 100}, value: "m", found: true, fields: 2, known: true},
		{name: "file over MaxField is fine", body: encode(t, file("file", "a", "audio/wav", audio), field("model", "m")),
			want: "model", lim: Limits{MaxField: 100}, value: "m", found: true, fields: 1, known: true},
		{name: "too many parts", body: encode(t, field("a", "1"), field("b", "2"), field("c", "3"), field("model", "m")),
			want: "model", lim: Limits{MaxParts: 3}, err: &Error{}},
		{name: "too many parts counts the look-ahead", body: encode(t, field("a", "1"), field("model", "m"), field("c", "3")),
			want: "model", lim: Limits{MaxParts: 2}, err: &Error{}},
		{name: "no closing boundary", body: strings.TrimSuffix(encode(t, file("file", "a.mp3", "audio/mpeg", audio)), "--"+testBoundary+"--\r\n"),
			want: "model", err: &Error{}},
		{name: "truncated mid-file", body: encode(t, file("file", "a.mp3", "audio/mpeg", audio))[:5000],
			want: "model", lim: Limits{Memory: 100}, err: &Error{}},
		{name: "bad header", body: "--" + testBoundary + "\r\nContent-Disposition form-data\r\n\r\nx\r\n--" + testBoundary + "--\r\n",
			want: "model", err: &Error{}},
		{name: "no disposition", body: "--" + testBoundary + "\r\nContent-Type: text/plain\r\n\r\nx\r\n--" + testBoundary + "--\r\n",
			want: "model", err: &Error{}},
		{name: "not form-data", body: "--" + testBoundary + "\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--" + testBoundary + "--\r\n",
			want: "model", err: &Error{}},
		{name: "no boundary at all", body: "just text", want: "model", err: &Error{}},
		{name: "empty body", body: "", want: "model", err: &Error{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.lim.Dir = t.TempDir()
			f, err := Read(context.Background(), strings.NewReader(tc.body), testBoundary, tc.want, tc.lim)
			if tc.err != nil {
				var fe *Error
				if !errors.As(err, &fe) {
					t.Fatalf("Read: %v, want an *Error", err)
				}
				if want := tc.err.(*Error); fe.Param != want.Param {
					t.Errorf("Param = %q, want %q", fe.Param, want.Param)
				}
				assertEmpty(t, tc.lim.Dir)
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			defer f.Close()
			if v, ok := f.Field(tc.want); v != tc.value || ok != tc.found {
				t.Errorf("Field = %q, %v; want %q, %v", v, ok, tc.value, tc.found)
			}
			if len(f.Fields()) != tc.fields {
				t.Errorf("Fields = %q, want %d", f.Fields(), tc.fields)
			}
			if files, _ := os.ReadDir(tc.lim.Dir); (len(files) > 0) != tc.spill {
				t.Errorf("spill files %v, want spill %v", files, tc.spill)
			}
			assertRoundTrip(t, f, tc.body, tc.known)
			f.Close()
			assertEmpty(t, tc.lim.Dir)
			if err := f.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// assertRoundTrip reads f.Body("model", "replaced") and checks it against
// the original body: the same parts, raw, but the model field's value.
func assertRoundTrip(t *testing.T, f *Form, orig string, known bool) {
	t.Helper()
	want, err := decodeParts(t, strings.NewReader(orig), testBoundary)
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(f.Body("model", "replaced"))
	if err != nil {
		t.Fatalf("reading Body: %v", err)
	}
	if n := f.Len(); (n >= 0) != known || (known && n != int64(len(out))) {
		t.Errorf("Len = %d, body has %d (known %v)", n, len(out), known)
	}
	if f.ContentType() != "multipart/form-data; boundary="+f.Boundary() {
		t.Errorf("ContentType = %q", f.ContentType())
	}
	got, err := decodeParts(t, bytes.NewReader(out), f.Boundary())
	if err != nil {
		t.Fatalf("parsing Body: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("Body has %d parts, want %d", len(got), len(want))
	}
	for i := range want {
		name, file, _ := describe(want[i].header)
		if name == "model" && !file {
			want[i].body = "replaced"
		}
		if !equalHeader(got[i].header, want[i].header) || got[i].body != want[i].body {
			t.Errorf("part %d = %v %.40q, want %v %.40q", i, got[i].header, got[i].body, want[i].header, want[i].body)
		}
	}
}

func equalHeader(a, b textproto.MIMEHeader) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	if files, _ := os.ReadDir(dir); len(files) > 0 {
		t.Errorf("files left in %s: %v", dir, files)
	}
}

func TestFilenamesRoundTrip(t *testing.T) {
	names := []string{`a "quoted" name.mp3`, `back\slash.wav`, "日本語の音声.m4a", "emoji 🎤.webm", "semi;colon=eq.ogg"}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			var b bytes.Buffer
			mw := multipart.NewWriter(&b)
			mw.SetBoundary(testBoundary)
			w, _ := mw.CreateFormFile("file", n) // escapes quotes and backslashes
			io.WriteString(w, "data")
			mw.WriteField("model", "whisper-1")
			mw.Close()
			orig := b.String()
			f, err := Read(context.Background(), strings.NewReader(orig), testBoundary, "model", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			assertRoundTrip(t, f, orig, true)
		})
	}
	// RFC 2231 filename* survives too, header bytes untouched.
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename*=UTF-8''%E9%9F%B3.mp3`)
	orig := encode(t, part{h, "x"}, field("model", "m"))
	f, err := Read(context.Background(), strings.NewReader(orig), testBoundary, "model", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	assertRoundTrip(t, f, orig, true)
}

func TestQuotedPrintableField(t *testing.T) {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="prompt"`)
	h.Set("Content-Transfer-Encoding", "quoted-printable")
	hm := textproto.MIMEHeader{}
	hm.Set("Content-Disposition", `form-data; name="model"`)
	hm.Set("Content-Transfer-Encoding", "quoted-printable")
	orig := encode(t, part{h, "caf=C3=A9"}, part{hm, "gpt=2D4o"})
	f, err := Read(context.Background(), strings.NewReader(orig), testBoundary, "model", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v, _ := f.Field("prompt"); v != "café" {
		t.Errorf("prompt = %q", v)
	}
	if v, _ := f.Field("model"); v != "gpt-4o" {
		t.Errorf("model = %q", v)
	}
	got, err := decodeParts(t, f.Body("model", "a=b"), f.Boundary())
	if err != nil {
		t.Fatal(err)
	}
	// The untouched field keeps its encoding; the replaced one is sent plain.
	if got[0].body != "caf=C3=A9" || got[0].header.Get("Content-Transfer-Encoding") != "quoted-printable" {
		t.Errorf("prompt part = %v %q", got[0].header, got[0].body)
	}
	if got[1].body != "a=b" || got[1].header.Get("Content-Transfer-Encoding") != "" {
		t.Errorf("model part = %v %q", got[1].header, got[1].body)
	}
}

// TestStreamedRest covers the parts after the wanted field: streamed, with a
// repeated field replaced too.
func TestStreamedRest(t *testing.T) {
	orig := encode(t, field("model", "a"), file("file", "x.wav", "audio/wav", "RIFF"), field("model", "b"), field("n", "1"))
	f, err := Read(context.Background(), strings.NewReader(orig), testBoundary, "model", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Fields()) != 1 {
		t.Errorf("Fields = %q", f.Fields())
	}
	assertRoundTrip(t, f, orig, false)
	if _, err := io.ReadAll(f.Body("model", "x")); err == nil {
		t.Error("a second Body read without error")
	}
}

// TestStreamErrors: what goes wrong after Read surfaces while Body is read.
func TestStreamErrors(t *testing.T) {
	audio := strings.Repeat("A", 50000)
	whole := encode(t, field("model", "m"), file("file", "a.mp3", "audio/mpeg", audio), field("x", "1"))
	errBroken := errors.New("connection reset")
	tests := []struct {
		name  string
		body  func() io.Reader
		check func(error) bool
	}{
		{"truncated mid-file", func() io.Reader { return strings.NewReader(whole[:30000]) },
			func(err error) bool { var fe *Error; return errors.As(err, &fe) }},
		{"reader fails mid-file", func() io.Reader {
			return io.MultiReader(strings.NewReader(whole[:30000]), errReader{errBroken})
		}, func(err error) bool { return err == errBroken }},
		{"body over MaxBytesReader", func() io.Reader {
			rec := httptest.NewRecorder()
			return http.MaxBytesReader(rec, io.NopCloser(strings.NewReader(whole)), 30000)
		}, func(err error) bool { var me *http.MaxBytesError; return errors.As(err, &me) }},
		{"malformed after", func() io.Reader {
			return strings.NewReader(strings.Replace(whole, "Content-Disposition: form-data; name=\"x\"", "Content-Disposition: nonsense", 1))
		}, func(err error) bool { var fe *Error; return errors.As(err, &fe) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(context.Background(), tc.body(), testBoundary, "model", Limits{})
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			defer f.Close()
			_, err = io.Copy(io.Discard, f.Body("model", "n"))
			if !tc.check(err) {
				t.Errorf("reading Body: %v (%T)", err, err)
			}
		})
	}
}

func TestReadErrorRemovesSpill(t *testing.T) {
	dir := t.TempDir()
	orig := encode(t, file("file", "a.mp3", "audio/mpeg", strings.Repeat("A", 50000)), field("model", "m"))
	broken := errors.New("broken")
	_, err := Read(context.Background(), io.MultiReader(strings.NewReader(orig[:40000]), errReader{broken}), testBoundary, "model", Limits{Memory: 1000, Dir: dir})
	if err != broken {
		t.Fatalf("Read: %v, want %v", err, broken)
	}
	assertEmpty(t, dir)
}

func TestContextCancelled(t *testing.T) {
	orig := encode(t, field("model", "m"), file("file", "a.mp3", "audio/mpeg", strings.Repeat("A", 100000)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, strings.NewReader(orig), testBoundary, "model", Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a cancelled context: %v", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	f, err := Read(ctx, smallReads(orig), testBoundary, "model", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	body := f.Body("model", "n")
	if _, err := io.ReadFull(body, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.Copy(io.Discard, body); !errors.Is(err, context.Canceled) {
		t.Errorf("reading Body after cancel: %v", err)
	}
}

// smallReads reads s in small pieces, so that the body is not read whole
// by the first read.
func smallReads(s string) io.Reader {
	return &smallReader{s: s}
}

type smallReader struct{ s string }

func (r *smallReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 512)], r.s)
	r.s = r.s[n:]
	return n, nil
}

// TestCloseBeforeBody: a Body read after Close fails, and not as the
// client's fault.
func TestCloseBeforeBody(t *testing.T) {
	dir := t.TempDir()
	orig := encode(t, file("file", "a.mp3", "audio/mpeg", strings.Repeat("A", 5000)), field("model", "m"))
	f, err := Read(context.Background(), strings.NewReader(orig), testBoundary, "model", Limits{Memory: 100, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	body := f.Body("model", "n")
	f.Close()
	assertEmpty(t, dir)
	_, err = io.Copy(io.Discard, body)
	var fe *Error
	if err == nil || errors.As(err, &fe) {
		t.Errorf("reading Body after Close: %v", err)
	}
}

// TestSpillFails: a spill file that cannot be written is the server's
// error, not a malformed form.
func TestSpillFails(t *testing.T) {
	orig := encode(t, file("file", "a.mp3", "audio/mpeg", strings.Repeat("A", 5000)), field("model", "m"))
	_, err := Read(context.Background(), strings.NewReader(orig), testBoundary, "model",
		Limits{Memory: 100, Dir: t.TempDir() + "/missing"})
	var fe *Error
	if err == nil || errors.As(err, &fe) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read: %v", err)
	}
}

// TestCloseWhileReading: an HTTP transport may still read the body when
// the handler returns and closes the Form.
func TestCloseWhileReading(t *testing.T) {
	dir := t.TempDir()
	orig := encode(t, file("file", "a.mp3", "audio/mpeg", strings.Repeat("A", 1<<20)), field("model", "m"))
	f, err := Read(context.Background(), strings.NewReader(orig), testBoundary, "model", Limits{Memory: 100, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	body := f.Body("model", "n")
	done := make(chan error)
	go func() {
		_, err := io.Copy(io.Discard, body)
		done <- err
	}()
	f.Close()
	if err := <-done; err != nil && !errors.Is(err, os.ErrClosed) {
		t.Errorf("reading Body while closed: %v", err)
	}
	assertEmpty(t, dir)
}

// A part must not be one field to the gateway and another to the
// upstream: two Content-Dispositions are refused, and so are name* and a
// file named as the field replaced, before or after it. filename* is
// taken (clients send it for names outside ASCII).
func TestSmuggledParts(t *testing.T) {
	twoDispositions := "--b\r\nContent-Disposition: form-data; name=\"prompt\"\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nx\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n--b--\r\n"
	fileBefore := "--b\r\nContent-Disposition: form-data; name=\"model\"; filename=\"m.txt\"\r\n\r\ngpt-4o\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n--b--\r\n"
	extended := "--b\r\nContent-Disposition: form-data; name=\"model\"; name*=utf-8''prompt\r\n\r\nx\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n--b--\r\n"
	for name, body := range map[string]string{"two dispositions": twoDispositions, "file before": fileBefore, "name*": extended} {
		f, err := Read(context.Background(), strings.NewReader(body), "b", "model", Limits{})
		var bad *Error
		if !errors.As(err, &bad) {
			t.Errorf("%s: %v, want an *Error", name, err)
			f.Close()
		}
	}
	fileAfter := "--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\ny\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"model\"; filename=\"m.txt\"\r\n\r\ngpt-4o\r\n--b--\r\n"
	f, err := Read(context.Background(), strings.NewReader(fileAfter), "b", "model", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = io.ReadAll(f.Body("model", "whisper-1"))
	var bad *Error
	if !errors.As(err, &bad) || bad.Param != "model" {
		t.Errorf("a file named model after the field: %v", err)
	}
}

func TestFilenameStarTaken(t *testing.T) {
	body := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename*=utf-8''r%C3%A9sum%C3%A9.wav\r\n\r\nRIFF\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n--b--\r\n"
	f, err := Read(context.Background(), strings.NewReader(body), "b", "model", Limits{})
	if err != nil {
		t.Fatalf("filename*: %v", err)
	}
	f.Close()
}
