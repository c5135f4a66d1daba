package dialect

import (
	"encoding/base64"
	"strconv"
)

// Google's list pages: 50 models unless asked, at most 1000.
const (
	geminiPageSize    = 50
	geminiMaxPageSize = 1000
)

// geminiModelPage is a page of the model list in Google's shape: the
// page token is where the next page starts, opaque to clients.
func geminiModelPage(ids []string, size, token string) (any, error) {
	n := geminiPageSize
	if size != "" {
		v, err := strconv.Atoi(size)
		if err != nil || v < 0 {
			return nil, &ScanError{Param: "pageSize", Msg: "pageSize: expected a non-negative integer, got " + strconv.Quote(Clip(size))}
		}
		if v > 0 {
			n = min(v, geminiMaxPageSize)
		}
	}
	from := 0
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		v, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || v < 0 || v > len(ids) {
			return nil, &ScanError{Param: "pageToken", Msg: "pageToken: not a page token of this list"}
		}
		from = v
	}
	to := min(from+n, len(ids))
	models := make([]any, 0, to-from)
	for _, id := range ids[from:to] {
		models = append(models, geminiModel(id))
	}
	page := map[string]any{"models": models}
	if to < len(ids) {
		page["nextPageToken"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(to)))
	}
	return page, nil
}

// geminiModel is one model in Google's shape: the operations tollgate
// serves for it (the limits are the upstream's, which it does not know).
func geminiModel(id string) map[string]any {
	return map[string]any{
		"name": "models/" + id, "baseModelId": id, "version": "tollgate", "displayName": id, "description": "",
		"supportedGenerationMethods": []string{"generateContent", "streamGenerateContent", "countTokens"},
	}
}
