package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
)

// SecretPrefix starts every virtual key, so that a leaked key is easy to
// recognise (and for secret scanners to match).
const SecretPrefix = "sk-tg-"

// displayPrefixLen is how much of a secret is stored to recognise it in
// lists: the prefix and six random characters (36 bits, not enough to
// help guess the 256-bit rest).
const displayPrefixLen = len(SecretPrefix) + 6

// NewSecret returns a new virtual key: the secret (shown once), its
// SHA-256 digest (stored) and its display prefix (stored).
func NewSecret() (secret string, hash []byte, display string) {
	var b [32]byte
	rand.Read(b[:])
	secret = SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(secret))
	return secret, sum[:], secret[:displayPrefixLen]
}

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewKeyID returns a new key id: "key_" and 80 random bits.
func NewKeyID() string {
	var b [10]byte
	rand.Read(b[:])
	return "key_" + idEncoding.EncodeToString(b[:])
}
