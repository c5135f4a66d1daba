package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TRANSLATION.md §2.3, one row per case (T23).
func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		stop, want string
		json       bool
	}{
		{"end_turn", "stop", false}, {"stop_sequence", "stop", false}, {"max_tokens", "length", false},
		{"tool_use", "tool_calls", false}, {"tool_use", "stop", true}, {"pause_turn", "stop", false},
		{"refusal", "content_filter", false}, {"model_context_window_exceeded", "length", false}, {"", "stop", false},
	} {
		if got := finishReason(tc.stop, tc.json); got != tc.want {
			t.Errorf("finishReason(%q, json=%v) = %q, want %q", tc.stop, tc.json, got, tc.want)
		}
	}
	for _, tc := range []struct {
		finish         string
		tools, refused bool
		want           string
	}{
		{"stop", false, false, "end_turn"}, {"stop", true, false, "tool_use"}, {"length", false, false, "max_tokens"},
		{"tool_calls", true, false, "tool_use"}, {"function_call", true, false, "tool_use"},
		{"content_filter", false, false, "refusal"}, {"", false, false, "end_turn"}, {"", true, false, "tool_use"},
		{"eos", false, false, "end_turn"}, {"stop", false, true, "refusal"},
	} {
		if got := stopReason(tc.finish, tc.tools, tc.refused); got != tc.want {
			t.Errorf("stopReason(%q, tools=%v, refused=%v) = %q, want %q", tc.finish, tc.tools, tc.refused, got, tc.want)
		}
	}
}

// TRANSLATION.md §4.2 and §4.3 (T40).
func TestErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		want     int
		wantType string
		wantCode string
		noRetry  bool
	}{
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 503, "service_unavailable_error", "server_is_overloaded", false},
		{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, 502, "server_error", "upstream_auth_failed", true},
		{402, `{"type":"error","error":{"type":"billing_error","message":"credit"}}`, 502, "server_error", "upstream_billing", true},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 300000 tokens > 200000 maximum"}}`, 400, "invalid_request_error", "context_length_exceeded", false},
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, 429, "rate_limit_error", "rate_limit_exceeded", false},
		{404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`, 404, "invalid_request_error", "model_not_found", false},
		{500, `<html>bad gateway</html>`, 500, "server_error", "", false},
		{0, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 503, "service_unavailable_error", "server_is_overloaded", false},
	} {
		status, body, noRetry := AnthropicErrorToOpenAI(tc.status, []byte(tc.body))
		if status != tc.want || gjson.GetBytes(body, "error.type").String() != tc.wantType ||
			gjson.GetBytes(body, "error.code").String() != tc.wantCode || noRetry != tc.noRetry {
			t.Errorf("AnthropicErrorToOpenAI(%d, %s) = %d %s noRetry=%v", tc.status, tc.body, status, body, noRetry)
		}
	}
	for _, tc := range []struct {
		status   int
		body     string
		want     int
		wantType string
		wantMsg  string
	}{
		{503, `{"error":{"message":"busy","type":"server_error","param":null,"code":null}}`, 529, "overloaded_error", "busy"},
		{401, `{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}`, 502, "api_error", ""},
		{429, `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, 502, "api_error", ""},
		{429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, 429, "rate_limit_error", "Rate limit reached"},
		{400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, 400, "invalid_request_error", "prompt is too long: 130001 tokens > 128000 maximum"},
		{422, `{"error":{"message":"bad","type":"invalid_request_error"}}`, 400, "invalid_request_error", "bad"},
		{404, `{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`, 404, "not_found_error", ""},
		{504, `gateway timeout`, 504, "timeout_error", "gateway timeout"},
	} {
		status, body := OpenAIErrorToAnthropic(tc.status, []byte(tc.body))
		if status != tc.want || gjson.GetBytes(body, "error.type").String() != tc.wantType || gjson.GetBytes(body, "type").String() != "error" {
			t.Errorf("OpenAIErrorToAnthropic(%d, %s) = %d %s", tc.status, tc.body, status, body)
		}
		if tc.wantMsg != "" && gjson.GetBytes(body, "error.message").String() != tc.wantMsg {
			t.Errorf("message = %q, want %q", gjson.GetBytes(body, "error.message").String(), tc.wantMsg)
		}
	}
}
