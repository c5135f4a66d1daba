package ledger

import (
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
)

// Row is the database row of a request's outcome.
func Row(r *outcome.Request) store.Request {
	rec := store.Request{
		ID: r.ID, Time: r.Arrived, KeyID: r.KeyID, UserID: r.UserID, TeamID: r.TeamID, SessionID: r.SessionID, ClientProtocol: r.ClientProtocol, Endpoint: Endpoint(r.Path),
		Model: r.Model, CanonicalModel: r.Canonical, Provider: r.Provider,
		UpstreamModel: r.UpstreamModel, Lane: r.Lane, Stream: r.Stream, Status: r.Status, ErrorType: r.ErrorType,
		Input: r.Usage.Input, CacheRead: r.Usage.CacheRead, CacheWrite5m: r.Usage.CacheWrite5m,
		CacheWrite1h: r.Usage.CacheWrite1h, Output: r.Usage.Output, Reasoning: r.Usage.Reasoning, Units: r.Usage.Units, Unit: r.Usage.Unit,
		LatencyMS: ms(r.Latency), TTFBMS: ms(r.FirstByte), UpstreamMS: ms(r.Upstream), OverheadMS: ms(r.Overhead()),
		ClientIP: r.ClientIP, UserAgent: r.UserAgent, Attempts: attemptsJSON(r.Attempts), UsageEstimated: r.UsageEstimated,
	}
	if r.CostKnown {
		c := r.Cost
		rec.CostNanoUSD = &c
	}
	if r.SavingsKnown {
		v := r.Savings
		rec.CacheSavingsNano = &v
	}
	return rec
}

// Endpoint names the gateway endpoint a request path called, as the
// ledger records it: the path of a fixed endpoint, the pattern of one that
// takes an id (so that the column holds a handful of values), and the
// path itself when it matched no endpoint. It follows the routes of
// gateway.Handler; only the inference endpoints' records count as usage
// (store.IsInferenceEndpoint).
func Endpoint(path string) string {
	if store.IsInferenceEndpoint(path) || path == "/v1/models" || path == "/v1beta/models" {
		return path
	}
	for _, models := range [...]string{"/v1/models/", "/v1beta/models/"} {
		rest, ok := strings.CutPrefix(path, models)
		if !ok {
			continue
		}
		// A Gemini operation, models/{model}:{method}, else a model.
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			if op := models + "{model}" + rest[i:]; store.IsInferenceEndpoint(op) {
				return op
			}
		}
		return models + "{id}" // the id may hold slashes: "{id...}"
	}
	if rest, ok := strings.CutPrefix(path, "/v1/responses/"); ok {
		switch id, sub, more := strings.Cut(rest, "/"); {
		case id != "" && !more:
			return "/v1/responses/{id}"
		case id != "" && sub == "input_items":
			return "/v1/responses/{id}/input_items"
		}
	}
	return path
}

// attemptsJSON renders the attempts as the row's JSON array.
func attemptsJSON(as []outcome.Attempt) string {
	if len(as) == 0 {
		return "[]"
	}
	b := make([]byte, 0, 96*len(as))
	for i, a := range as {
		if i == 0 {
			b = append(b, '[')
		} else {
			b = append(b, ',')
		}
		b = append(b, `{"target":`...)
		b = jsonx.AppendQuote(b, a.Target)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(a.Status), 10)
		b = append(b, `,"error":`...)
		b = jsonx.AppendQuote(b, a.Error)
		b = append(b, `,"ms":`...)
		b = strconv.AppendFloat(b, ms(a.Time), 'f', -1, 64)
		b = append(b, '}')
	}
	return string(append(b, ']'))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
