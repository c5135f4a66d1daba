package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/go-jose/go-jose/v4"
)

// keySet is the IdP's JWKS, the go-oidc KeySet the verifier checks
// signatures with. Unlike go-oidc's RemoteKeySet it spaces refetches: an
// unknown kid refetches at most once per keysRefetch, so tokens with
// made-up kids cannot make tollgate hammer the IdP.
type keySet struct {
	p *Provider
	f fetched[map[string][]jose.JSONWebKey]
}

// verifyState carries the typed error of a signature check out through
// go-oidc, which flattens the errors its KeySet returns.
type verifyState struct{ err error }

type verifyStateKey struct{}

func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	payload, err := k.verify(ctx, raw)
	if err != nil {
		if st, ok := ctx.Value(verifyStateKey{}).(*verifyState); ok {
			st.err = err
		}
	}
	return payload, err
}

func (k *keySet) verify(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, k.p.joseAlgs)
	if err != nil {
		return nil, fail(reasonMalformed, err)
	}
	if len(jws.Signatures) != 1 {
		return nil, failf(reasonMalformed, "want exactly one signature")
	}
	hdr := jws.Signatures[0].Header
	d, err := k.p.discover(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := k.f.get(ctx, k.p.now, func(m map[string][]jose.JSONWebKey) bool {
		return len(candidates(m, hdr.KeyID)) == 0
	}, func(ctx context.Context) (map[string][]jose.JSONWebKey, error) {
		return k.fetch(ctx, d.jwksURL)
	})
	cands := candidates(keys, hdr.KeyID)
	if len(cands) == 0 {
		if err != nil {
			return nil, unavailable(err)
		}
		return nil, fail(reasonUnknownKey, fmt.Errorf("no key %q in the IdP's JWKS", hdr.KeyID))
	}
	k.p.verifications.Add(1)
	for i := range cands {
		key := &cands[i]
		if key.Algorithm != "" && key.Algorithm != hdr.Algorithm {
			continue
		}
		if payload, err := jws.Verify(key); err == nil {
			return payload, nil
		}
	}
	return nil, failf(reasonSignature, "signature does not verify")
}

// candidates are the keys a token with key id kid may be signed with:
// those with that kid, or all of them when the token names none.
func candidates(m map[string][]jose.JSONWebKey, kid string) []jose.JSONWebKey {
	if kid != "" {
		return m[kid]
	}
	var all []jose.JSONWebKey
	for _, keys := range m {
		all = append(all, keys...)
	}
	return all
}

// fetch reads the JWKS, keeping the public signing keys by kid. Keys of
// types go-jose does not know are skipped (RFC 7517 §5), as are symmetric
// ones: a JWKS publishes no secrets.
func (k *keySet) fetch(ctx context.Context, url string) (map[string][]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.p.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks: %s", resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	keys := make(map[string][]jose.JSONWebKey, len(set.Keys))
	n := 0
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if err := key.UnmarshalJSON(raw); err != nil {
			if errors.Is(err, jose.ErrUnsupportedKeyType) {
				continue
			}
			k.p.cfg.Logger.Debug("oidc jwks: skipping a key", "error", err)
			continue
		}
		if key.Use == "enc" {
			continue
		}
		switch pub := key.Public(); pub.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			keys[pub.KeyID] = append(keys[pub.KeyID], pub)
			n++
		}
	}
	k.p.cfg.Logger.Info("oidc jwks fetched", "issuer", k.p.cfg.Issuer, "keys", n)
	return keys, nil
}
