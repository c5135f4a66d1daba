package oidc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func FuzzVerifyBearer(f *testing.F) {
	idp, p, _ := setup(f, nil)
	good := idp.Token("tollgate", time.Hour)
	f.Add(good)
	f.Add(strings.Replace(good, ".", "..", 1))
	f.Add(idp.SignWith("none", nil, idp.KeyID(), idp.Claims("tollgate", time.Hour)))
	f.Add(idp.SignWith("HS256", []byte("secret-secret-secret-secret-secret"), idp.KeyID(), idp.Claims("tollgate", time.Hour)))
	f.Add(idp.SignWith("RS256", idp.Key(), idp.KeyID(), map[string]any{"iss": idp.URL, "aud": []any{1, nil}, "exp": "soon", "email": []string{"x"}}))
	f.Add("sk-tg-abc")
	f.Add("e30.e30.e30")
	f.Fuzz(func(t *testing.T, raw string) {
		id, err := verify(t, p, raw)
		if err == nil {
			if id.Subject == "" {
				t.Fatalf("accepted %q with no subject", raw)
			}
			return
		}
		if !errors.Is(err, ErrInvalidToken) && !errors.Is(err, ErrUnavailable) {
			t.Fatalf("%q: error %v is neither ErrInvalidToken nor ErrUnavailable", raw, err)
		}
	})
}
