package gateway

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// The hand-encoded request line carries the same fields and values as the
// slog one, and is valid JSON even with hostile strings.
func TestRequestLineMatchesSlog(t *testing.T) {
	for _, x := range []*exchange{
		{id: "req_1", dialect: dialect.OpenAI, start: time.Now(), status: 404, err: errors.New(`model "a\"b\n<x>" does not exist`), model: "a\"b\n<x>"},
		{id: "req_2", dialect: dialect.Anthropic, start: time.Now(), status: 200, model: "claude", provider: "ant", upstreamModel: "claude-x",
			lane: "passthrough", stream: true, upstreamStatus: 200, firstByte: 1500 * time.Microsecond, upstream: 3 * time.Millisecond,
			usage: meter.Usage{Input: 1, CacheRead: 2, CacheWrite5m: 3, CacheWrite1h: 4, Output: 5, Reasoning: 6}, clientGone: true},
	} {
		var viaSlog bytes.Buffer
		x.log(context.Background(), slog.New(slog.NewJSONHandler(&viaSlog, nil)), nil, "POST", "/v1/chat/completions?x=\"")
		var viaAppend bytes.Buffer
		x.log(context.Background(), nil, &viaAppend, "POST", "/v1/chat/completions?x=\"")
		var a, b map[string]any
		if err := jsonx.Unmarshal(bytes.TrimSpace(viaSlog.Bytes()), &a); err != nil {
			t.Fatal(err)
		}
		if err := jsonx.Unmarshal(bytes.TrimSpace(viaAppend.Bytes()), &b); err != nil {
			t.Fatalf("hand-encoded line is not JSON: %v\n%s", err, viaAppend.Bytes())
		}
		for _, m := range []map[string]any{a, b} {
			delete(m, "time")
			delete(m, "latency_ms")
		}
		if d := cmp.Diff(a, b); d != "" {
			t.Errorf("request line differs from slog's (-slog +appended):\n%s", d)
		}
	}
}
