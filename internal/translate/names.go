package translate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
)

// OpenAI function names must match ^[a-zA-Z0-9_-]{1,64}$.
const maxToolName = 64

func validToolName(s string) bool {
	if s == "" || len(s) > maxToolName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !idChar(s[i]) {
			return false
		}
	}
	return true
}

func idChar(c byte) bool {
	return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// upstreamToolName maps a client tool name to one an OpenAI upstream
// accepts: unchanged when valid, else "<first 55 chars, sanitised>_<8 hex of
// SHA-256>". The mapping is deterministic, so history and definitions agree,
// and recorded in the plan so answers carry the client's name.
func (p *Plan) upstreamToolName(name string) string {
	if validToolName(name) {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	short := sanitizeID(name)
	if len(short) > 55 {
		short = short[:55]
	}
	short += "_" + hex.EncodeToString(sum[:4])
	if p.toolNames == nil {
		p.toolNames = make(map[string]string)
	}
	p.toolNames[short] = name
	return short
}

// sanitizeID makes a tool id acceptable to Anthropic (^[a-zA-Z0-9_-]+$) by
// replacing every other byte with "_". It is deterministic, so a tool call
// id and the tool result that answers it map to the same value.
func sanitizeID(id string) string {
	if id == "" {
		return "toolu_" + randomHex(12)
	}
	ok := true
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	b := []byte(id)
	for i, c := range b {
		if !idChar(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Signer makes synthetic thinking signatures: SDK types require a
// signature on every thinking block.
type Signer struct{ key []byte }

// NewSigner returns a Signer keyed with secret.
func NewSigner(secret []byte) *Signer { return &Signer{key: secret} }

// Sign returns the synthetic signature of a thinking text.
func (s *Signer) Sign(thinking string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(thinking))
	return anthropic.SyntheticSignaturePrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil))[:32]
}

// sealedPrefix starts the encrypted_content of reasoning items tollgate
// makes for Responses clients of other upstreams. What it seals (the
// upstream's reasoning, such as Claude's signed thinking blocks) comes back
// verbatim when the client returns the item; the HMAC keeps the gateway
// from taking a client's own bytes for its upstream's.
const sealedPrefix = "tollgate.r1."

// seal encodes payload as an encrypted_content value.
func (s *Signer) seal(payload []byte) string {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// unseal returns the payload of a value seal made with this key.
func (s *Signer) unseal(v string) ([]byte, bool) {
	if !strings.HasPrefix(v, sealedPrefix) {
		return nil, false
	}
	body, tag, ok := strings.Cut(v[len(sealedPrefix):], ".")
	if !ok {
		return nil, false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(body)
	sum, err2 := base64.RawURLEncoding.DecodeString(tag)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return payload, hmac.Equal(sum, m.Sum(nil)[:16])
}

// signatureMagic starts the bytes of a Gemini thoughtSignature tollgate
// makes. Google's SDKs take thoughtSignature as base64 bytes (the Go SDK
// refuses a whole answer whose signature does not decode), so a sealed
// value goes to Gemini clients as standard base64 of the magic, the MAC
// and the payload, where Responses clients get seal's text form.
const signatureMagic = "tgr1"

// sealSignature encodes payload as a Gemini thoughtSignature.
func (s *Signer) sealSignature(payload []byte) string {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	b := make([]byte, 0, len(signatureMagic)+16+len(payload))
	b = append(append(append(b, signatureMagic...), m.Sum(nil)[:16]...), payload...)
	return base64.StdEncoding.EncodeToString(b)
}

// unsealSignature returns the payload of a thoughtSignature sealSignature
// made with this key; Google's own signatures do not open.
func (s *Signer) unsealSignature(v string) ([]byte, bool) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) < len(signatureMagic)+16 || string(b[:len(signatureMagic)]) != signatureMagic {
		return nil, false
	}
	sum, payload := b[len(signatureMagic):len(signatureMagic)+16], b[len(signatureMagic)+16:]
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return payload, hmac.Equal(sum, m.Sum(nil)[:16])
}

// encodeReasoning seals reasoning text that came as text (reasoning_content).
func (s *Signer) encodeReasoning(text string) string {
	return s.seal(mustJSON(sealedReasoning{Text: text}))
}

// sealedReasoning is what a sealed reasoning item (or a Gemini client's
// thoughtSignature) carries: Anthropic thinking blocks exactly as the
// upstream sent them, reasoning text, or a Responses upstream's reasoning
// item as it sent it.
type sealedReasoning struct {
	Blocks jsontext.Value `json:"blocks,omitzero"`
	Text   string         `json:"text,omitempty"`
	Item   jsontext.Value `json:"item,omitzero"`
}

// chatID derives a stable chat completion id from a message or response id.
func chatID(msgID string) string {
	for _, prefix := range [...]string{"msg_", "resp_"} { // a message's or a response's id
		if rest, ok := strings.CutPrefix(msgID, prefix); ok && rest != "" {
			return "chatcmpl-" + rest
		}
	}
	if msgID == "" {
		return "chatcmpl-" + base62(24)
	}
	return "chatcmpl-" + msgID
}

const base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func base62(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = base62Alphabet[int(b[i])%len(base62Alphabet)]
	}
	return string(b)
}
