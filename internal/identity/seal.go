package identity

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// The IdP's refresh tokens are kept sealed (AES-256-GCM) under a key that
// replicas share (derived from the master key, Options.SealKey): a copy
// of the database alone cannot ask the IdP for anyone's tokens.

func (s *Service) aead() cipher.AEAD {
	key := sha256.Sum256(append([]byte("tollgate idp refresh token\x00"), s.o.SealKey...))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // a 32-byte key always makes a cipher
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return g
}

// seal encrypts a secret: a random nonce, then the ciphertext.
func (s *Service) seal(secret string) []byte {
	g := s.aead()
	nonce := make([]byte, g.NonceSize(), g.NonceSize()+len(secret)+g.Overhead())
	_, _ = rand.Read(nonce)
	return g.Seal(nonce, nonce, []byte(secret), nil)
}

// unseal is seal's inverse; an error for what another key sealed.
func (s *Service) unseal(b []byte) (string, error) {
	g := s.aead()
	if len(b) < g.NonceSize() {
		return "", errors.New("sealed value too short")
	}
	plain, err := g.Open(nil, b[:g.NonceSize()], b[g.NonceSize():], nil)
	return string(plain), err
}
