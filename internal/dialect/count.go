package dialect

// What a prompt's parts that are not text count for, in every dialect's
// CountPrompt: the tokenizer cannot see their size.

// imageTokens is what one image counts for when its size is unknown (a
// typical 1092×1092 image is about 1,600 tokens for Claude).
const imageTokens = 1600

// base64Tokens is what a base64 payload of n bytes counts for (a PDF or an
// image given inline): a flat part and a part that grows with its size,
// as the gateway's reservations weigh them.
func base64Tokens(n int) int { return 2000 + n/256 }
