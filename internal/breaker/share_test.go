package breaker

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Two replicas' breakers for one target, shared through Redis: an open
// on one is an open on the other, and so is the close after a good probe.
func TestShareThroughRedis(t *testing.T) {
	url := os.Getenv("TOLLGATE_TEST_REDIS_URL")
	if url == "" {
		t.Skip("TOLLGATE_TEST_REDIS_URL is not set; set it (e.g. redis://127.0.0.1:6379/0) to run the Redis tests")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	var rnd [6]byte
	rand.Read(rnd[:])
	prefix := "tgtest:breaker:" + hex.EncodeToString(rnd[:]) + ":"
	defer c.Del(t.Context(), prefix+"t")

	s := Settings{Failures: 2, Cooldown: 400 * time.Millisecond}
	one, two := New(s), New(s)
	stop1 := Share(c, prefix, map[string]*Breaker{"t": one}, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	defer stop1()
	stop2 := Share(c, prefix, map[string]*Breaker{"t": two}, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	defer stop2()

	for i := 0; i < 2; i++ {
		one.Allow()
		one.Done(Failure)
	}
	waitFor(t, "the other replica to open", func() bool { return two.State() == Open })
	if two.Allow() {
		t.Fatal("the other replica let a request through an open breaker")
	}
	time.Sleep(s.Cooldown)
	if !one.Allow() {
		t.Fatal("no probe after the cooldown")
	}
	one.Done(Success)
	waitFor(t, "the other replica to close", func() bool { return two.State() == Closed })
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
