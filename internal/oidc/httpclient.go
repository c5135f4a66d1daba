package oidc

import (
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

// cappedTransport fails a body that goes past maxResponseBytes (with an
// *http.MaxBytesError), rather than truncating it into something that
// might still parse.
type cappedTransport struct{ next http.RoundTripper }

func (t cappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > maxResponseBytes {
		resp.Body.Close()
		return nil, &http.MaxBytesError{Limit: maxResponseBytes}
	}
	resp.Body = http.MaxBytesReader(nil, resp.Body, maxResponseBytes)
	return resp, nil
}
