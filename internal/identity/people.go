package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/oidc"
	"github.com/tollgate/tollgate/internal/store"
)

// personTTL is how long a resolved person is served from memory: a user
// disabled or removed from a team, or a token revoked, on any replica
// loses access within it (as auth.HardTTL for keys).
const personTTL = 5 * time.Second

// maxPeople bounds the cache: past it, entries are dropped at random (a
// flood of distinct valid tokens costs queries, not memory).
const maxPeople = 20_000

// peopleCache holds resolved people by what named them: a token's digest,
// or an owner's user and team.
type peopleCache struct {
	mu sync.Mutex
	m  map[string]cachedPerson
}

type cachedPerson struct {
	p       *auth.Person
	err     error // a refusal (auth.ErrInvalidKey), cached as briefly
	expires time.Time
}

func (c *peopleCache) init() { c.m = map[string]cachedPerson{} }

func (c *peopleCache) get(k string, now time.Time) (cachedPerson, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || !now.Before(e.expires) {
		return cachedPerson{}, false
	}
	return e, true
}

func (c *peopleCache) put(k string, e cachedPerson) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxPeople {
		n := 0
		for k := range c.m { // map order is random enough to evict by
			delete(c.m, k)
			if n++; n >= maxPeople/10 {
				break
			}
		}
	}
	c.m[k] = e
}

// forget drops every cached person (after an admin change on this replica,
// so that it applies at once here; other replicas follow within personTTL).
func (c *peopleCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// Authenticate resolves a sign-in token: an access token the gateway
// minted, or an IdP-issued JWT (whose user is provisioned on first use).
func (s *Service) Authenticate(ctx context.Context, credential string) (*auth.Person, error) {
	sum := sha256.Sum256([]byte(credential))
	k := string(sum[:])
	now := s.now()
	if e, ok := s.people.get(k, now); ok {
		return e.p, e.err
	}
	var p *auth.Person
	var until time.Time
	var err error
	switch {
	case strings.HasPrefix(credential, accessPrefix):
		p, until, err = s.accessToken(ctx, sum[:], now)
	case s.idp != nil:
		p, until, err = s.bearerJWT(ctx, credential, now)
	default:
		err = auth.SignInError("no_identity_provider")
	}
	if err != nil && !errors.Is(err, auth.ErrInvalidKey) {
		return nil, err // unavailable: not cached
	}
	exp := now.Add(personTTL)
	if !until.IsZero() && until.Before(exp) {
		exp = until
	}
	s.people.put(k, cachedPerson{p: p, err: err, expires: exp})
	return p, err
}

// accessToken resolves a token minted at sign-in; until is its expiry.
func (s *Service) accessToken(ctx context.Context, hash []byte, now time.Time) (*auth.Person, time.Time, error) {
	t, err := s.st.TokenByHash(ctx, hash)
	switch {
	case store.IsNotFound(err):
		return nil, time.Time{}, auth.SignInError("unknown_token")
	case err != nil:
		return nil, time.Time{}, s.unavailable(err)
	case t.Kind != "access":
		return nil, time.Time{}, auth.SignInError("not_access_token")
	case t.RevokedAt != nil:
		return nil, time.Time{}, auth.SignInError("revoked_token")
	case !now.Before(t.ExpiresAt):
		return nil, time.Time{}, auth.SignInError("expired_token")
	}
	p, err := s.resolve(ctx, t.UserID, t.TeamID, true)
	if p != nil {
		// A token minted for Claude Code is for inference: it never
		// carries the console role (the admin API wants the IdP's own,
		// fresh word on it).
		p.Admin = false
	}
	return p, t.ExpiresAt, err
}

// bearerJWT resolves an IdP-issued JWT: verified by the IdP's keys, its
// user provisioned and their teams taken from its groups.
func (s *Service) bearerJWT(ctx context.Context, raw string, now time.Time) (*auth.Person, time.Time, error) {
	id, err := s.idp.VerifyBearer(ctx, raw)
	if err != nil {
		if errors.Is(err, oidc.ErrUnavailable) {
			return nil, time.Time{}, s.unavailable(err)
		}
		return nil, time.Time{}, auth.SignInError("idp_token_" + oidc.Reason(err))
	}
	u, primary, err := s.provision(ctx, nil, id, false)
	if err != nil {
		return nil, time.Time{}, err
	}
	p, err := s.resolve(ctx, u.ID, primary, false)
	return p, id.Expiry, err
}

// Owner is the person who owns a virtual key (auth.People).
func (s *Service) Owner(ctx context.Context, userID, teamID string) (*auth.Person, error) {
	k := "owner\x00" + userID + "\x00" + teamID
	now := s.now()
	if e, ok := s.people.get(k, now); ok {
		return e.p, e.err
	}
	// A key charged to a team works only while its owner is in that team
	// (it must not outlive the membership and shed the team's policy); a
	// key of no team acts in its owner's primary team.
	p, err := s.resolve(ctx, userID, teamID, teamID != "")
	if err != nil && !errors.Is(err, auth.ErrInvalidKey) {
		return nil, err
	}
	s.people.put(k, cachedPerson{p: p, err: err, expires: now.Add(personTTL)})
	return p, err
}

// resolve builds the person for a user acting in teamID. With bound, the
// team was fixed at sign-in: a user no longer in it is refused (they were
// removed from the team); otherwise a team they left falls back to their
// primary team. A user who does not exist or is disabled is refused.
func (s *Service) resolve(ctx context.Context, userID, teamID string, bound bool) (*auth.Person, error) {
	u, err := s.st.UserByID(ctx, userID)
	switch {
	case store.IsNotFound(err):
		return nil, auth.SignInError("unknown_user")
	case err != nil:
		return nil, s.unavailable(err)
	case u.Disabled:
		return nil, auth.SignInError("disabled_user")
	}
	teams, err := s.st.TeamsOf(ctx, u.ID)
	if err != nil {
		return nil, s.unavailable(err)
	}
	var team *store.Team
	for i := range teams {
		if teams[i].ID == teamID {
			team = &teams[i]
		}
	}
	if team == nil && teamID != "" && bound {
		return nil, auth.SignInError("removed_from_team")
	}
	if team == nil {
		for i := range teams {
			if teams[i].ID == u.PrimaryTeamID {
				team = &teams[i]
			}
		}
	}
	if team == nil && len(teams) > 0 {
		team = &teams[0]
	}
	return s.personOf(u, team), nil
}

// personOf is the request's view of a user in a team (nil: none).
func (s *Service) personOf(u store.User, team *store.Team) *auth.Person {
	p := auth.Person{UserID: u.ID, Subject: u.Subject, Admin: u.Admin}
	own := s.limits(u.Limits, "user", u.ID)
	var teamModels []string
	if team != nil {
		p.TeamID, p.Team = team.ID, team.Name
		p.TeamLimits = s.limits(team.Limits, "team", team.ID)
		own = own.Over(s.limits(team.MemberLimits, "team", team.ID))
		teamModels = team.Models
	}
	p.Limits = own
	return auth.NewPerson(p, teamModels, u.Models)
}

// limits parses stored limits (validated when stored); what does not
// parse is logged and counts as none.
func (s *Service) limits(b []byte, kind, id string) limit.Limits {
	var l limit.Limits
	if len(b) > 2 {
		if err := jsonx.Unmarshal(b, &l); err != nil {
			s.log.Error("identity: stored limits do not parse", "kind", kind, "id", id, "error", err)
			return limit.Limits{}
		}
	}
	return l
}

// Known reports whether a credential with this digest authenticated a
// person within the cache's lifetime (auth.People).
func (s *Service) Known(sum [32]byte) bool {
	e, ok := s.people.get(string(sum[:]), s.now())
	return ok && e.p != nil
}

// Forget drops what this replica holds in memory about people, after a
// change to users or teams made here.
func (s *Service) Forget() { s.people.forget() }
