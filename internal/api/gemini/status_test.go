package gemini

import "testing"

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		in, code int
		name     string
	}{
		{400, 400, "INVALID_ARGUMENT"},
		{401, 401, "UNAUTHENTICATED"},
		{403, 403, "PERMISSION_DENIED"},
		{404, 404, "NOT_FOUND"},
		{405, 405, "UNIMPLEMENTED"},
		{409, 409, "ABORTED"},
		{413, 413, "INVALID_ARGUMENT"},
		{429, 429, "RESOURCE_EXHAUSTED"},
		{499, 499, "CANCELLED"},
		{500, 500, "INTERNAL"},
		{501, 501, "UNIMPLEMENTED"},
		{502, 502, "UNAVAILABLE"},
		{503, 503, "UNAVAILABLE"},
		{504, 504, "DEADLINE_EXCEEDED"},
		{529, 503, "UNAVAILABLE"},
		{422, 400, "INVALID_ARGUMENT"},
		{402, 400, "INVALID_ARGUMENT"},
		{507, 500, "INTERNAL"},
		{200, 500, "INTERNAL"},
		{0, 500, "INTERNAL"},
	} {
		if code, name := Status(tc.in); code != tc.code || name != tc.name {
			t.Errorf("%d: %d %s, want %d %s", tc.in, code, name, tc.code, tc.name)
		}
	}
}
