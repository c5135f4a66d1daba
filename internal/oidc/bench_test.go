package oidc

import (
	"context"
	"testing"
	"time"
)

// BenchmarkVerifyBearer measures a token seen for the first time (a
// signature check; keys and discovery are cached) and one seen before.
func BenchmarkVerifyBearer(b *testing.B) {
	idp, p, _ := setup(b, nil)
	pool := make([]string, 64)
	for i := range pool {
		c := idp.Claims("tollgate", time.Hour)
		c["jti"] = i
		pool[i] = idp.Sign(c)
	}
	ctx := context.Background()
	if _, err := p.VerifyBearer(ctx, pool[0]); err != nil {
		b.Fatal(err)
	}
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			p.cache.clear()
			if _, err := p.VerifyBearer(ctx, pool[i%len(pool)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.VerifyBearer(ctx, pool[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLooksLikeJWT(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if !LooksLikeJWT(sampleJWT) {
			b.Fatal("not a JWT")
		}
	}
}
