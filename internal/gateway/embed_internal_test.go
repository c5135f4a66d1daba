package gateway

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/meter"
)

// The usage of an embeddings answer is read from its ends, wherever the
// answer is cut into reads, without keeping the answer.
func TestAnswerEndsUsage(t *testing.T) {
	vectors := strings.Repeat(`{"object":"embedding","index":0,"embedding":[0.1,0.2,0.3]},`, 2000)
	for _, c := range []struct {
		name, body string
		want       int64
	}{
		{"last", `{"object":"list","data":[` + vectors + `{}],"model":"m","usage":{"prompt_tokens":42,"total_tokens":42}}`, 42},
		{"first", `{"usage":{"prompt_tokens":7,"total_tokens":7},"object":"list","data":[` + vectors + `{}]}`, 7},
		{"small", `{"data":[],"usage":{"prompt_tokens":3,"total_tokens":3}}`, 3},
		{"none", `{"object":"list","data":[` + vectors + `{}],"model":"m"}`, 0},
	} {
		for _, step := range []int{1, 7, 4096, 1 << 20} {
			a := &answerEnds{ReadCloser: io.NopCloser(&chunked{r: strings.NewReader(c.body), step: step})}
			var out bytes.Buffer
			if _, err := io.Copy(&out, a); err != nil || out.String() != c.body {
				t.Fatalf("%s/%d: relayed %d bytes, %v", c.name, step, out.Len(), err)
			}
			var u meter.Usage
			a.usage(&u)
			if u.Input != c.want || len(a.head) > endsSize || len(a.tail) > endsSize {
				t.Errorf("%s/%d: input %d, want %d (kept %d + %d bytes)", c.name, step, u.Input, c.want, len(a.head), len(a.tail))
			}
		}
	}
}

// chunked reads at most step bytes at a time.
type chunked struct {
	r    io.Reader
	step int
}

func (c *chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.step)]) }
