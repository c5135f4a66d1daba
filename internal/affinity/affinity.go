// Package affinity keeps a conversation on one upstream: a request's
// routing key (what identifies its conversation) ranks the candidates —
// targets, pool keys — by rendezvous (highest random weight) hashing, so
// that every replica ranks them alike with no shared state, and a
// candidate that fails or leaves moves only the conversations it held.
package affinity

import (
	"encoding/binary"
	"math"

	"github.com/cespare/xxhash/v2"
)

// Key identifies a conversation; zero is none (the request is spread at
// random instead).
type Key uint64

// Hash is a running hash of a conversation's identifying parts.
type Hash struct{ d xxhash.Digest }

// NewHash starts a hash; source names what the parts are, so that equal
// bytes from different sources give different keys. A Hash is a value, so
// that keying a request allocates nothing.
func NewHash(source string) Hash {
	var h Hash
	h.d.Reset()
	h.d.WriteString(source)
	return h
}

// Add hashes one part, length-prefixed, so that parts cannot run into
// each other.
func (h *Hash) Add(part []byte) {
	h.addUint(uint64(len(part)))
	h.d.Write(part)
}

// AddHead hashes a part by its length (n; -1 when unknown) and its first
// max bytes.
func (h *Hash) AddHead(part []byte, n, max int) {
	h.addUint(uint64(n))
	h.Add(part[:min(len(part), max)])
}

func (h *Hash) addUint(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.d.Write(b[:])
}

// Key is the key of the parts added; never zero.
func (h *Hash) Key() Key { return nonZero(h.d.Sum64()) }

// Of is the key of one value from a source (a prompt_cache_key, a user).
func Of(source string, v []byte) Key {
	h := NewHash(source)
	h.Add(v)
	return h.Key()
}

// Within is k scoped to a tenant (see auth.Key.Tenant): the same
// conversation of two tenants (the same prompt, or the same
// prompt_cache_key or user named by two clients) gives two unrelated
// keys, so that neither the candidates it ranks first nor the
// prompt_cache_key derived from it are shared across tenants, while one
// tenant's requests keep theirs. Zero (no conversation) stays zero.
func (k Key) Within(tenant string) Key {
	if k == 0 {
		return 0
	}
	h := NewHash("tenant")
	h.addUint(uint64(len(tenant)))
	h.d.WriteString(tenant)
	h.addUint(uint64(k))
	return h.Key()
}

func nonZero(k uint64) Key {
	if k == 0 {
		return 1
	}
	return Key(k)
}

// ID is a candidate's identity in rankings: a hash of its name.
func ID(name string) uint64 { return xxhash.Sum64String(name) }

// mix is SplitMix64's finalizer: a key and a candidate's id become an
// evenly spread 64-bit value.
func mix(k Key, id uint64) uint64 {
	z := uint64(k) ^ id
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Score is a candidate's weighted rendezvous score for key k: the
// highest score wins. Over many keys, each candidate wins a share
// proportional to its weight (Schindelhauer and Schomaker's logarithmic
// method: weight / -ln(u), u uniform in (0, 1)).
func Score(k Key, id uint64, weight int) float64 {
	u := (float64(mix(k, id)>>11) + 0.5) / (1 << 53) // in (0, 1)
	return float64(weight) / -math.Log(u)
}

// Hex is k as sixteen hex digits, for a value sent upstream
// (prompt_cache_key).
func (k Key) Hex() string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := range b {
		b[15-i] = digits[(uint64(k)>>(4*i))&0xf]
	}
	return string(b[:])
}
