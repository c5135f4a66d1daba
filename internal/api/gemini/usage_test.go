package gemini

import (
	"testing"

	"github.com/tollgate/tollgate/internal/meter"
)

func TestSetUsage(t *testing.T) {
	var u meter.Usage
	SetUsage(&u, `{"promptTokenCount":1200,"cachedContentTokenCount":1000,"candidatesTokenCount":40,"thoughtsTokenCount":300,"toolUsePromptTokenCount":5,"totalTokenCount":1545}`)
	if want := (meter.Usage{Input: 205, CacheRead: 1000, Output: 340, Reasoning: 300}); u != want {
		t.Errorf("got %+v, want %+v", u, want)
	}
	SetUsage(&u, `{"promptTokenCount":7}`)
	if u != (meter.Usage{Input: 7}) {
		t.Errorf("a first chunk's usage: %+v", u)
	}
	SetUsage(&u, `not json`)
	if u != (meter.Usage{Input: 7}) {
		t.Errorf("garbage changed the usage: %+v", u)
	}
}
