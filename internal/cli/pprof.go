package cli

import (
	"net/http"
	"net/http/pprof"
)

// profiles serves Go's runtime profiles under /debug/pprof/, on a mux of
// its own: net/http/pprof's import also registers them on
// http.DefaultServeMux, which tollgate never serves.
func profiles() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index) // heap, goroutine, allocs, block, mutex, threadcreate by name
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
