package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Response is a response stored for a client of the Responses API.
type Response struct {
	ID    string
	Owner string // the id of the key that made it; "" for the master key
	Model string // the model name the client used
	// Target is the target (provider/model) that answered; UpstreamStored
	// says the upstream, a Responses API, kept the response itself, so a
	// continuation sent to the same target may name it.
	Target         string
	UpstreamStored bool
	// Prev is the stored response its request continued ("" for none):
	// the conversation before Input is Prev's (ResponseChain).
	Prev     string
	Input    []byte // JSON array: the input items its request added
	Response []byte // JSON object: the response as the client got it
	// Affinity is the routing key of its conversation (0: none).
	Affinity  int64
	CreatedAt time.Time
	ExpiresAt time.Time
}

// ErrResponseExists is returned when a response with the id is stored.
var ErrResponseExists = errors.New("a response with this id is already stored")

// ErrChainTooLong is returned when a conversation has more stored
// responses than ResponseChain may read.
var ErrChainTooLong = errors.New("the conversation has too many stored responses")

const responseColumns = "id, owner, model, target, upstream_stored, prev_id, input, response, created_at, expires_at, affinity"

// PutResponse stores a response. A response that continues another (Prev)
// joins its conversation: the conversation's responses are purged
// together, once the last has expired, so that none loses its start.
func (s *Store) PutResponse(ctx context.Context, r Response) error {
	id := cleanText(r.ID)
	_, err := s.db.ExecContext(ctx, s.rebind("INSERT INTO responses (root, "+responseColumns+") VALUES ("+
		"COALESCE((SELECT "+rootOf+" FROM responses WHERE id = ? AND owner = ?), ?),?,?,?,?,?,?,?,?,?,?,?)"),
		cleanText(r.Prev), cleanText(r.Owner), id,
		id, cleanText(r.Owner), cleanText(r.Model), cleanText(r.Target), r.UpstreamStored, cleanText(r.Prev),
		cleanBytes(r.Input), cleanBytes(r.Response), r.CreatedAt.UnixMilli(), r.ExpiresAt.UnixMilli(), r.Affinity)
	if err != nil && isUniqueViolation(err) {
		return ErrResponseExists
	}
	return err
}

// MaxResponseChain is the most stored responses one conversation may
// have.
const MaxResponseChain = 1000

// ResponseByID returns the response id owned by owner that has not expired
// at now (nor been deleted); another owner's is not found, exactly like a
// missing one.
func (s *Store) ResponseByID(ctx context.Context, id, owner string, now time.Time) (Response, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT "+responseColumns+" FROM responses WHERE id = ? AND owner = ? AND expires_at > ? AND NOT deleted"),
		id, owner, now.UnixMilli())
	if err != nil {
		return Response{}, err
	}
	rs, err := scanResponses(rows)
	if err != nil {
		return Response{}, err
	}
	if len(rs) == 0 {
		return Response{}, sql.ErrNoRows
	}
	return rs[0], nil
}

// chainCTE walks a response's links back from the response (id, owner)
// names, to at most depth responses: the table chain (cid, cprev, depth),
// depth 1 the response. Every response of a conversation has its owner.
// Its parameters are id, owner, owner, depth.
func chainCTE(anchor string) string {
	return `WITH RECURSIVE chain (cid, cprev, depth) AS (
  SELECT id, prev_id, 1 FROM responses WHERE id = ? AND owner = ?` + anchor + `
  UNION ALL
  SELECT r.id, r.prev_id, c.depth + 1 FROM responses r JOIN chain c ON r.id = c.cprev
  WHERE r.owner = ? AND c.depth < ?) `
}

// ResponseChain returns the response id, as ResponseByID finds it, after
// the responses its conversation continued, oldest first: their inputs
// and outputs, then its input, are the conversation that led to it. A
// conversation of more than MaxResponseChain responses is
// ErrChainTooLong.
func (s *Store) ResponseChain(ctx context.Context, id, owner string, now time.Time) ([]Response, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(chainCTE(" AND expires_at > ? AND NOT deleted")+
		"SELECT "+responseColumns+" FROM chain JOIN responses ON id = cid ORDER BY depth DESC"), id, owner, now.UnixMilli(), owner, MaxResponseChain+1)
	if err != nil {
		return nil, err
	}
	chain, err := scanResponses(rows)
	switch {
	case err != nil:
		return nil, err
	case len(chain) == 0:
		return nil, sql.ErrNoRows
	case len(chain) > MaxResponseChain:
		return nil, ErrChainTooLong
	}
	return chain, nil
}

// ResponseKnown reports whether a response id is stored, whoever owns it,
// expired or deleted: an id the gateway has given out.
func (s *Store) ResponseKnown(ctx context.Context, id string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.rebind("SELECT COUNT(*) FROM responses WHERE id = ?"), id).Scan(&n)
	return n > 0, err
}

func scanResponses(rows *sql.Rows) ([]Response, error) {
	defer rows.Close()
	var out []Response
	for rows.Next() {
		var r Response
		var created, expires int64
		if err := rows.Scan(&r.ID, &r.Owner, &r.Model, &r.Target, &r.UpstreamStored, &r.Prev, &r.Input, &r.Response, &created, &expires, &r.Affinity); err != nil {
			return nil, err
		}
		r.CreatedAt, r.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// DeleteResponse deletes the response id owned by owner; a missing one (or
// another owner's) is sql.ErrNoRows. A response that a later one continues
// from is only hidden: its items stay, part of that one's conversation,
// until the last response after it is deleted or expires.
func (s *Store) DeleteResponse(ctx context.Context, id, owner string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var prev string
	if err := tx.QueryRowContext(ctx, s.rebind("SELECT prev_id FROM responses WHERE id = ? AND owner = ? AND NOT deleted"), id, owner).Scan(&prev); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.rebind("UPDATE responses SET deleted = ? WHERE id = ?"), true, id); err != nil {
		return err
	}
	// Delete the hidden responses that none continues from any more, from
	// this one back.
	for range MaxResponseChain {
		res, err := tx.ExecContext(ctx, s.rebind("DELETE FROM responses WHERE id = ? AND deleted AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.prev_id = ?)"), id, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 || prev == "" {
			break
		}
		id = prev
		if err := tx.QueryRowContext(ctx, s.rebind("SELECT prev_id FROM responses WHERE id = ?"), id).Scan(&prev); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				break
			}
			return err
		}
	}
	return tx.Commit()
}

// rootOf is a row's conversation: its root, or for a row a replica
// still running the release before conversations were linked stored
// without one (an empty root), the row alone, so that such rows never join
// one group that outlives them all.
const rootOf = "(CASE WHEN root = '' THEN id ELSE root END)"

// PurgeResponses deletes the conversations whose every response has
// expired at now, and reports how many responses there were. (A response
// expired before the last of its conversation stays, found by no id, for
// the conversation of those after it.)
func (s *Store) PurgeResponses(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM responses WHERE "+rootOf+" IN "+
		"(SELECT "+rootOf+" FROM responses GROUP BY "+rootOf+" HAVING MAX(expires_at) <= ?)"), now.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
