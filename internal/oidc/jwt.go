package oidc

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"
)

const (
	// maxTokenBytes bounds a bearer token: IdP tokens with many groups run
	// to several KiB; anything far larger is not worth hashing or parsing.
	maxTokenBytes = 32 << 10
	// maxHeaderBytes bounds a JWT's decoded header (alg, kid, typ and the
	// odd x5t fit in far less).
	maxHeaderBytes = 1 << 10
)

// LooksLikeJWT reports whether s has the shape of a JWS in compact form:
// three base64url segments (the last may be empty), the first decoding to
// a JSON object with a string "alg". It tells an IdP's token from a
// virtual key ("sk-tg-…", which has no dots) or a gateway token, cheaply:
// it does not parse the payload or allocate beyond the header.
func LooksLikeJWT(s string) bool {
	buf := headerBufs.Get().(*[maxHeaderBytes]byte)
	_, ok := headerAlg(s, buf)
	headerBufs.Put(buf)
	return ok
}

// headerBufs hold decoded headers: gjson keeps hold of what it parses,
// so a buffer on the stack would move to the heap on every call.
var headerBufs = sync.Pool{New: func() any { return new([maxHeaderBytes]byte) }}

// headerAlg returns the alg of a token that LooksLikeJWT. The header is
// decoded into buf, and alg points into it: copy it to keep it.
func headerAlg(s string, buf *[maxHeaderBytes]byte) (alg string, ok bool) {
	if len(s) > maxTokenBytes {
		return "", false
	}
	i := strings.IndexByte(s, '.')
	if i <= 0 {
		return "", false
	}
	j := strings.IndexByte(s[i+1:], '.')
	if j <= 0 {
		return "", false
	}
	j += i + 1
	if !isBase64URL(s[:i]) || !isBase64URL(s[i+1:j]) || !isBase64URL(s[j+1:]) {
		return "", false // also refuses a fourth segment: '.' is not base64url
	}
	hdr, ok := decodeBase64URL(buf[:], s[:i])
	if !ok || len(hdr) == 0 || !gjson.ValidBytes(hdr) {
		return "", false
	}
	k := 0
	for k < len(hdr) && (hdr[k] == ' ' || hdr[k] == '\t' || hdr[k] == '\r' || hdr[k] == '\n') {
		k++
	}
	if k == len(hdr) || hdr[k] != '{' {
		return "", false
	}
	// gjson.GetBytes would copy the header; a string over buf does
	// not, and gjson.Get's results point into it.
	r := gjson.Get(unsafe.String(&hdr[0], len(hdr)), "alg")
	if r.Type != gjson.String {
		return "", false
	}
	return r.Str, true
}

// isBase64URL reports whether s is canonical unpadded base64url: its
// alphabet, a possible length, and zero bits after the last byte.
func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		if base64URLValue(s[i]) < 0 {
			return false
		}
	}
	switch len(s) % 4 {
	case 1:
		return false
	case 2:
		return base64URLValue(s[len(s)-1])&0xf == 0
	case 3:
		return base64URLValue(s[len(s)-1])&0x3 == 0
	}
	return true
}

func base64URLValue(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '-':
		return 62
	case c == '_':
		return 63
	}
	return -1
}

// decodeBase64URL decodes unpadded base64url s (already checked to hold
// only its alphabet) into dst, failing when it does not fit. The standard
// decoder takes a []byte, which would cost an allocation per call.
func decodeBase64URL(dst []byte, s string) ([]byte, bool) {
	if len(s)%4 == 1 || len(s)/4*3+2 > len(dst) {
		return nil, false
	}
	n := 0
	var acc uint32
	bits := 0
	for i := 0; i < len(s); i++ {
		acc = acc<<6 | uint32(base64URLValue(s[i]))
		bits += 6
		if bits >= 8 {
			bits -= 8
			dst[n] = byte(acc >> bits)
			n++
		}
	}
	// Leftover bits must be zero, as in a canonical encoding.
	if acc&(1<<bits-1) != 0 {
		return nil, false
	}
	return dst[:n], true
}
