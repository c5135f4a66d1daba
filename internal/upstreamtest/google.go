package upstreamtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// GoogleTokens is a fake Google OAuth2 token endpoint for a service
// account: it takes the JWT-bearer grant the Google libraries send,
// checks the assertion's RS256 signature with the account's public key,
// its issuer, audience and scope, and issues access tokens that live
// ExpiresIn. Upstreams ask it whether a bearer token is one it issued
// and still valid.
type GoogleTokens struct {
	*httptest.Server
	Key   *rsa.PrivateKey
	Email string

	mu        sync.Mutex
	expiresIn time.Duration
	issued    map[string]time.Time // token -> expiry
	fetches   int
}

// NewGoogleTokens starts a token endpoint for a new service account whose
// tokens live expiresIn.
func NewGoogleTokens(expiresIn time.Duration) *GoogleTokens {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	g := &GoogleTokens{Key: key, Email: "tollgate-test@test-project.iam.gserviceaccount.com", expiresIn: expiresIn, issued: map[string]time.Time{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	return g
}

// ServiceAccountJSON is the account's key file, as the Cloud console
// makes it, with this endpoint as its token_uri.
func (g *GoogleTokens) ServiceAccountJSON() []byte {
	der := x509.MarshalPKCS1PrivateKey(g.Key)
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "test-project", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})),
		"client_email": g.Email, "client_id": "1", "token_uri": g.URL + "/token",
	})
	return b
}

// Fetches is how many tokens were issued.
func (g *GoogleTokens) Fetches() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fetches
}

// Valid reports whether an Authorization header carries a token this
// endpoint issued that has not expired.
func (g *GoogleTokens) Valid(authorization string) bool {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	g.mu.Lock()
	defer g.mu.Unlock()
	exp, known := g.issued[tok]
	return ok && known && time.Now().Before(exp)
}

func (g *GoogleTokens) serve(w http.ResponseWriter, r *http.Request) {
	fail := func(msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"invalid_grant","error_description":%q}`, msg)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/token" || r.ParseForm() != nil {
		fail("not a token request")
		return
	}
	if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		fail("unsupported grant_type")
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		fail("assertion is not a JWT")
		return
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(&g.Key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		fail("Invalid JWT Signature.")
		return
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Iss, Scope, Aud string
		Exp, Iat        int64
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Iss != g.Email || claims.Aud != g.URL+"/token" ||
		!strings.Contains(claims.Scope, "https://www.googleapis.com/auth/cloud-platform") || claims.Exp <= claims.Iat {
		fail("bad claims: " + string(raw))
		return
	}
	g.mu.Lock()
	g.fetches++
	tok := fmt.Sprintf("ya29.tollgate-test-token-%d", g.fetches)
	g.issued[tok] = time.Now().Add(g.expiresIn)
	expires := int(g.expiresIn / time.Second)
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":%q,"expires_in":%d,"token_type":"Bearer"}`, tok, expires)
}
