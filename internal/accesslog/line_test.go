package accesslog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/outcome"
)

// The hand-encoded request line carries the same fields and values as the
// slog one, and is valid JSON even with hostile strings.
func TestRequestLineMatchesSlog(t *testing.T) {
	for _, r := range []*outcome.Request{
		{ID: "req_1", Method: "POST", Path: "/v1/chat/completions?x=\"", Status: 404,
			Err: errors.New(`model "a\"b\n<x>" does not exist`), Model: "a\"b\n<x>", Latency: time.Millisecond},
		{ID: "req_2", Method: "POST", Path: "/v1/chat/completions?x=\"", Status: 200, Model: "claude", Provider: "ant", UpstreamModel: "claude-x",
			Lane: "passthrough", Stream: true, UpstreamStatus: 200, FirstByte: 1500 * time.Microsecond, Upstream: 3 * time.Millisecond,
			Usage: meter.Usage{Input: 1, CacheRead: 2, CacheWrite5m: 3, CacheWrite1h: 4, Output: 5, Reasoning: 6}, ClientGone: true,
			Cost: 42, CostKnown: true},
		{ID: "req_3", Method: "GET", Path: "/", Status: 502, Provider: "p", Err: errors.New("boom"), UsageEstimated: true},
	} {
		var viaSlog bytes.Buffer
		Log(context.Background(), slog.New(slog.NewJSONHandler(&viaSlog, nil)), nil, r)
		var viaAppend bytes.Buffer
		Log(context.Background(), nil, &viaAppend, r)
		var a, b map[string]any
		if err := jsonx.Unmarshal(bytes.TrimSpace(viaSlog.Bytes()), &a); err != nil {
			t.Fatal(err)
		}
		if err := jsonx.Unmarshal(bytes.TrimSpace(viaAppend.Bytes()), &b); err != nil {
			t.Fatalf("hand-encoded line is not JSON: %v\n%s", err, viaAppend.Bytes())
		}
		for _, m := range []map[string]any{a, b} {
			delete(m, "time")
		}
		if d := cmp.Diff(a, b); d != "" {
			t.Errorf("request line differs from slog's (-slog +appended):\n%s", d)
		}
	}
}
