package gateway

import (
	"errors"
	"net/http"
	"strings"

	"github.com/tollgate/tollgate/internal/dialect"
)

// The routes of URL-addressed protocols (dialect.Addressed): the model
// and the operation are in the path, {route}/{model}:{method}, which a
// ServeMux pattern cannot split, so one handler serves everything under
// {route}/ and asks the dialect what the path says.

// addressedRoutes are the model routes of the URL-addressed dialects, each
// with the dialect that addresses operations under it (the first that
// names it).
func addressedRoutes() (routes []string, by map[string]*dialect.Dialect) {
	by = map[string]*dialect.Dialect{}
	for _, d := range dialect.All() {
		if d.Address == nil {
			continue
		}
		for _, rt := range d.Addressed {
			if by[rt] == nil {
				by[rt] = d
				routes = append(routes, rt)
			}
		}
	}
	return routes, by
}

// isAPIPath reports whether path is under an API version the gateway
// serves: /v1/, or a URL-addressed dialect's route.
func isAPIPath(path string) bool {
	if strings.HasPrefix(path, "/v1/") {
		return true
	}
	for _, d := range dialect.All() {
		for _, rt := range d.Addressed {
			if path == rt || strings.HasPrefix(path, rt) && path[len(rt)] == '/' {
				return true
			}
		}
	}
	return false
}

// claimed serves the requests d claims (dialect.ForRequest) with mine,
// and every other with others: a route d shares with other protocols.
func claimed(d *dialect.Dialect, mine, others http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dialect.ForRequest(r) == d {
			mine.ServeHTTP(w, r)
			return
		}
		others.ServeHTTP(w, r)
	})
}

// addressed serves {route}/{rest...}: GET is the model rest names; POST is
// an operation of d on the model (d.Address reads which).
func (g *Gateway) addressed(d *dialect.Dialect) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, x *exchange) error {
		switch r.Method {
		case http.MethodGet:
			return g.getModel(w, r, x)
		case http.MethodPost:
		default:
			e := newError(http.StatusMethodNotAllowed, dialect.MethodNotAllowed,
				"method "+r.Method+" is not allowed on "+dialect.Clip(r.URL.Path)+"; use GET or POST")
			e.Header = http.Header{"Allow": {"GET, POST"}}
			return e
		}
		x.dialect = d
		a, err := d.Address(r, r.PathValue("id"))
		if err != nil {
			return addressError(r, err)
		}
		return g.serveModel(w, r, x, dialect.Endpoint{Op: a.Op}, &a)
	}
}

// addressError is the client's answer to a path Address refused.
func addressError(r *http.Request, err error) error {
	var re *dialect.RouteError
	if errors.As(err, &re) {
		return newError(http.StatusNotFound, dialect.NotFound, re.Msg)
	}
	var se *dialect.ScanError
	if errors.As(err, &se) {
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: se.Param, Message: se.Msg}
	}
	return noEndpoint(r)
}

// frame wraps a stream's tap when the client asked for another framing
// than server-sent events (dialect.Address.Frame).
func (c *call) frame(t dialect.Tap) dialect.Tap {
	if c.addr == nil || c.addr.Frame == nil {
		return t
	}
	return c.addr.Frame(t)
}
