package dialect

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/affinity"
)

// keyPart bounds what of each part of a conversation's start is hashed:
// its length and its first keyPart bytes. A conversation is told apart by
// its tools, system prompt and first turn long before their ends, and a
// 100 KB first turn then costs no more to key than an 8 KB one.
const keyPart = 8 << 10

// promptKey keys a conversation by how it starts: the model, the given
// members (tools, system prompt) and the conversation's leading system
// messages and first user turn, which every later request of the
// conversation resends unchanged.
func promptKey(s *Scanned, members ...[]byte) affinity.Key {
	h := affinity.NewHash("prompt")
	h.Add(s.Model)
	for _, m := range members {
		h.AddHead(m, len(m), keyPart)
	}
	conv := s.ConversationRaw
	switch {
	case len(conv) > 0 && conv[0] == '[':
		leadingTurns(&h, conv)
	case len(conv) > 0:
		// A Responses input string is the first user turn; keyed as the
		// item it stands for, as a stored conversation holds it.
		item := UserInputItem(conv)
		h.AddHead(item, len(item), keyPart)
	}
	return h.Key()
}

// leadingTurns hashes the turns of a conversation array up to its first
// user turn. The array was validated by the scan. A turn longer than
// keyPart is hashed by its head, and ends the walk unless its head shows
// a role other than user.
func leadingTurns(h *affinity.Hash, conv []byte) {
	for i := 1; i < len(conv); {
		switch conv[i] {
		case ' ', '\t', '\r', '\n', ',':
			i++
			continue
		case ']':
			return
		}
		n, whole := valueEnd(conv[i:], keyPart)
		turn := conv[i : i+n]
		role := gjson.Get(unsafeString(turn), "role")
		if whole {
			h.AddHead(turn, n, keyPart)
		} else {
			h.AddHead(turn, -1, keyPart) // its length would take reading it all
			if !role.Exists() || role.Str == "user" {
				return
			}
			if n, whole = valueEnd(conv[i:], len(conv)); !whole {
				return
			}
		}
		if role.Str == "user" {
			return
		}
		i += n
	}
}

// valueEnd returns the length of the JSON value that b starts with, read
// no further than limit bytes; whole is false when the value is longer
// (n is then limit) or b ends first. b is valid JSON from the scan: only
// strings and nesting need following.
func valueEnd(b []byte, limit int) (n int, whole bool) {
	limit = min(limit, len(b))
	depth := 0
	for i := 0; i < limit; i++ {
		switch c := b[i]; c {
		case '"':
			if i = stringEnd(b[:limit], i+1); i < 0 {
				return limit, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
			if depth < 0 { // a scalar ended by its container
				return i, true
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i, true
			}
		}
	}
	if depth == 0 && limit == len(b) && limit > 0 {
		return limit, true // a scalar that ends the input
	}
	return limit, false
}

// stringEnd returns the index of the quote that closes a string whose
// contents start at i, or -1 when b ends first.
func stringEnd(b []byte, i int) int {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i
		for k > 0 && b[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i // not escaped
		}
		i++
	}
}

// UserInputItem is the Responses input item a string input stands for (s
// is the JSON string, quotes included).
func UserInputItem(s []byte) []byte {
	return append(append([]byte(`{"type":"message","role":"user","content":`), s...), '}')
}

// openAIAffinity: the client's prompt_cache_key, else its end user, else
// the conversation's start.
func openAIAffinity(s *Scanned, cacheKey, user []byte, members ...[]byte) (affinity.Key, bool) {
	if k := gjson.Parse(unsafeString(cacheKey)); k.Type == gjson.String && k.Str != "" {
		return affinity.Of("prompt_cache_key", []byte(k.Str)), true
	}
	if u := gjson.Parse(unsafeString(user)); u.Type == gjson.String && u.Str != "" {
		return affinity.Of("user", []byte(u.Str)), false
	}
	return promptKey(s, members...), false
}

// promptCacheKey replaces the client's prompt_cache_key in an
// OpenAI-protocol request with the gateway's, derived from it within the
// client's tenant, and gives the request the gateway's when the client
// sent none and h.AddKey says so: the upstream routes the conversation to
// the servers that cached its prefix, and the requests of two tenants
// that name the same key apart. A key that is not a non-empty string is
// left for the upstream to judge (it named no conversation).
func promptCacheKey(body []byte, h CacheHints) ([]byte, int, error) {
	if h.Key == "" {
		return nil, -1, nil
	}
	k := gjson.GetBytes(body, "prompt_cache_key")
	if k.Exists() && (k.Type != gjson.String || k.Str == "") || !k.Exists() && !h.AddKey {
		return nil, -1, nil
	}
	out, err := sjson.SetBytes(body, "prompt_cache_key", h.Key)
	return out, -1, err
}
