package oidc

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

const (
	fetchTimeout = 5 * time.Second
	// maxResponseBytes caps every body read from the IdP: discovery and
	// JWKS documents are a few KiB, and a hostile or broken IdP must not
	// make tollgate buffer more.
	maxResponseBytes = 1 << 20
)

var errTooLarge = fmt.Errorf("response larger than %d bytes", maxResponseBytes)

// boundedClient returns c, or a client with connect and total timeouts
// when c is nil, with response bodies capped at maxResponseBytes.
func boundedClient(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: fetchTimeout, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = fetchTimeout
		t.ResponseHeaderTimeout = fetchTimeout
		out = http.Client{Transport: t, Timeout: fetchTimeout}
	}
	next := out.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = cappedTransport{next}
	return &out
}

type cappedTransport struct{ next http.RoundTripper }

func (t cappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > maxResponseBytes {
		resp.Body.Close()
		return nil, errTooLarge
	}
	resp.Body = &cappedBody{rc: resp.Body, left: maxResponseBytes}
	return resp, nil
}

// cappedBody fails a read that goes past the cap, rather than truncating
// the body into something that might still parse.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
