package upstreamtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// BedrockCredentials are the AWS credentials a fake Bedrock accepts.
type BedrockCredentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	Region                                     string
}

// NewBedrock starts a fake Amazon Bedrock runtime. Each request's AWS
// Signature V4 is checked as AWS checks it: recomputed with the same
// secret over the signed headers and the body's hash, its scope (key,
// region, service "bedrock") and its time (within 15 minutes). A request
// that fails is answered 403 InvalidSignatureException or
// UnrecognizedClientException, as Bedrock does.
//
// Otherwise reply(r) answers: a Status of 300 or more, or a Body, is
// written as it is (give Bedrock's error shape: an X-Amzn-Errortype header
// and {"message": …}); Events (server-sent events of the Anthropic
// Messages API) become application/vnd.amazon.eventstream frames, one
// chunk event each carrying the event's data base64-encoded, with
// CorruptFrame and Exception as Bedrock-only extras.
func NewBedrock(creds BedrockCredentials, reply func(r Received) Reply) *Server {
	s := &Server{reply: reply, gone: make(chan struct{}, 64)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec := Received{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body}
		s.mu.Lock()
		s.received = append(s.received, rec)
		s.mu.Unlock()
		if kind, msg := checkSigV4(r, body, creds); kind != "" {
			writeBedrockError(w, http.StatusForbidden, kind, msg)
			return
		}
		rep := s.reply(rec)
		if rep.Events == nil {
			for k, v := range rep.Header {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(cmpStatus(rep.Status))
			w.Write(rep.Body)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("X-Amzn-Bedrock-Content-Type", "application/json")
		w.WriteHeader(cmpStatus(rep.Status))
		rc := http.NewResponseController(w)
		rc.Flush()
		enc := eventstream.NewEncoder()
		for i, ev := range rep.Events {
			if !s.wait(r, rep) {
				return
			}
			var frame bytes.Buffer
			enc.Encode(&frame, chunkMessage(sseData(ev)))
			b := frame.Bytes()
			if rep.CorruptFrame == i+1 {
				b[len(b)-5] ^= 0xff // a payload byte: the message CRC no longer matches
			}
			if _, err := w.Write(b); err != nil {
				return
			}
			rc.Flush()
		}
		if e := rep.Exception; e != nil {
			var frame bytes.Buffer
			enc.Encode(&frame, eventstream.Message{
				Headers: eventstream.Headers{
					{Name: ":exception-type", Value: eventstream.StringValue(e.Type)},
					{Name: ":content-type", Value: eventstream.StringValue("application/json")},
					{Name: ":message-type", Value: eventstream.StringValue("exception")},
				},
				Payload: []byte(`{"message":` + quote(e.Message) + `}`),
			})
			w.Write(frame.Bytes())
			rc.Flush()
		}
		s.end(r, rep)
	}))
	return s
}

// BedrockException is an exception frame a fake Bedrock stream ends with.
type BedrockException struct {
	Type    string // modelStreamErrorException, throttlingException, …
	Message string
}

func cmpStatus(s int) int {
	if s == 0 {
		return http.StatusOK
	}
	return s
}

// sseData is the data of one server-sent event (its data lines joined).
func sseData(ev []byte) []byte {
	var data [][]byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" ")))
		}
	}
	return bytes.Join(data, []byte("\n"))
}

// chunkMessage is Bedrock's frame for one model event.
func chunkMessage(data []byte) eventstream.Message {
	return eventstream.Message{
		Headers: eventstream.Headers{
			{Name: ":event-type", Value: eventstream.StringValue("chunk")},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("event")},
		},
		Payload: []byte(`{"bytes":"` + base64.StdEncoding.EncodeToString(data) + `","p":"abcdefghij"}`),
	}
}

func writeBedrockError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", kind+":http://internal.amazon.com/coral/com.amazon.coral.service/")
	w.WriteHeader(status)
	io.WriteString(w, `{"message":`+quote(msg)+`}`)
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// checkSigV4 verifies r's signature; it returns the error's name and
// message when it does not hold, "" when it does.
func checkSigV4(r *http.Request, body []byte, creds BedrockCredentials) (kind, msg string) {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "MissingAuthenticationTokenException", "Missing Authentication Token"
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[0] != creds.AccessKeyID {
		return "UnrecognizedClientException", "The security token included in the request is invalid."
	}
	if scope[2] != creds.Region || scope[3] != "bedrock" || scope[4] != "aws4_request" {
		return "InvalidSignatureException", "Credential should be scoped to a valid region and service bedrock."
	}
	if creds.SessionToken != "" && r.Header.Get("X-Amz-Security-Token") != creds.SessionToken {
		return "UnrecognizedClientException", "The security token included in the request is invalid."
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || scope[1] != at.Format("20060102") {
		return "InvalidSignatureException", "X-Amz-Date is missing or does not match the credential scope."
	}
	if d := time.Since(at); d > 15*time.Minute || d < -15*time.Minute {
		return "InvalidSignatureException", "Signature expired: the signing time is more than 15 minutes from the server's."
	}
	sum := sha256.Sum256(body)
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != "" && got != hex.EncodeToString(sum[:]) {
		return "InvalidSignatureException", "The provided payload hash does not match the body."
	}
	// The request as the client signed it: the signed headers only.
	again := &http.Request{Method: r.Method, Host: r.Host, Header: http.Header{}, ContentLength: r.ContentLength,
		URL: &url.URL{Scheme: "https", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath}}
	for _, name := range strings.Split(fields["SignedHeaders"], ";") {
		if name == "host" || name == "content-length" {
			continue
		}
		again.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
	}
	c := aws.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey, SessionToken: creds.SessionToken}
	if err := v4.NewSigner().SignHTTP(context.Background(), c, again, hex.EncodeToString(sum[:]), "bedrock", creds.Region, at); err != nil {
		return "InvalidSignatureException", err.Error()
	}
	if again.Header.Get("Authorization") != auth {
		return "InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."
	}
	return "", ""
}
