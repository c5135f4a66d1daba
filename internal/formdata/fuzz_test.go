package formdata

import (
	"bytes"
	"context"
	"io"
	"net/textproto"
	"slices"
	"testing"
)

// FuzzRead: Read never panics, and whenever it reads a body whole, the body
// from Body parses back to the same fields with "model" replaced, whether the
// form was read whole first or streamed after its model field.
func FuzzRead(f *testing.F) {
	qp := textproto.MIMEHeader{}
	qp.Set("Content-Disposition", `form-data; name="model"`)
	qp.Set("Content-Transfer-Encoding", "quoted-printable")
	seeds := []string{
		encode(f, field("model", "whisper-1"), file("file", "a.mp3", "audio/mpeg", "ID3\r\n--x")),
		encode(f, file("file", "a.mp3", "audio/mpeg", "ID3"), field("model", "m"), field("n", "2")),
		encode(f, file("image", `q"uote.png`, "image/png", "PNG"), field("prompt", "p"), part{qp, "a=3Db"}, field("model", "2")),
		encode(f),
		"--" + testBoundary + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nx\r\n--" + testBoundary + "--",
		"garbage",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{Memory: 64, MaxField: 1 << 10, MaxParts: 50, Dir: t.TempDir()}
		ctx := context.Background()
		whole, err := Read(ctx, bytes.NewReader(data), testBoundary, "", lim) // no field is named ""
		if err != nil {
			if s, err := Read(ctx, bytes.NewReader(data), testBoundary, "model", lim); err == nil {
				io.Copy(io.Discard, s.Body("model", "R"))
				s.Close()
			}
			return
		}
		defer whole.Close()
		want := slices.Clone(whole.Fields())
		for i := range want {
			if want[i][0] == "model" {
				want[i][1] = "R"
			}
		}
		check := func(what string, form *Form) {
			out, err := io.ReadAll(form.Body("model", "R"))
			if err != nil {
				t.Fatalf("%s: reading Body: %v", what, err)
			}
			if n := form.Len(); n != -1 && n != int64(len(out)) {
				t.Fatalf("%s: Len %d, body has %d", what, n, len(out))
			}
			back, err := Read(ctx, bytes.NewReader(out), form.Boundary(), "", lim)
			if err != nil {
				t.Fatalf("%s: parsing Body: %v\n%q", what, err, out)
			}
			defer back.Close()
			if !slices.Equal(back.Fields(), want) {
				t.Fatalf("%s: fields %q, want %q", what, back.Fields(), want)
			}
		}
		check("read whole", whole)
		streamed, err := Read(ctx, bytes.NewReader(data), testBoundary, "model", lim)
		if err != nil {
			t.Fatalf("streamed: Read: %v", err)
		}
		defer streamed.Close()
		check("streamed", streamed)
	})
}
