package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

// runProxy is the hidden "proxy" subcommand: the baseline a Go gateway is
// compared with, a bare httputil.ReverseProxy that does nothing but forward.
// FlushInterval -1 flushes after every write, so SSE events pass through
// without buffering, as a gateway must.
func runProxy(args []string) int {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (loopback only)")
	upstream := fs.String("upstream", "", "upstream base URL, e.g. http://127.0.0.1:9000 (loopback only)")
	exitOnEOF := fs.Bool("exit-on-stdin-eof", false, "exit when standard input reaches EOF (the parent went away)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	target, err := url.Parse(*upstream)
	if err != nil || target.Scheme != "http" || target.Host == "" {
		fmt.Fprintf(os.Stderr, "proxy: bad -upstream %q\n", *upstream)
		return 2
	}
	if err := requireLoopbackListen(target.Host); err != nil {
		fmt.Fprintln(os.Stderr, "proxy: upstream:", err)
		return 2
	}
	if err := requireLoopbackListen(*listen); err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 2
	}

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 1024
	tr.DisableCompression = true
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// net/http's server closes the inbound body once the response
			// header is written, while the transport still does one more
			// Read after sending ContentLength bytes (to detect an overlong
			// body). When a fast upstream answers in between, that Read
			// fails and the transport drops the upstream connection in the
			// middle of the answer. Ending the body at ContentLength avoids
			// the extra Read, as any Go gateway must.
			if cl := pr.Out.ContentLength; cl > 0 && pr.Out.Body != nil {
				pr.Out.Body = struct {
					io.Reader
					io.Closer
				}{io.LimitReader(pr.Out.Body, cl), pr.Out.Body}
			}
		},
		Transport:     tr,
		FlushInterval: -1,
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 1
	}
	if *exitOnEOF {
		go exitOnStdinEOF()
	}
	fmt.Printf("LISTEN %s\n", ln.Addr())
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 1
	}
	return 0
}
