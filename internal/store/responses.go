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
	Input          []byte // JSON array: every input item of the conversation so far
	Response       []byte // JSON object: the response as the client got it
	// Affinity is the routing key of its conversation (0: none).
	Affinity  int64
	CreatedAt time.Time
	ExpiresAt time.Time
}

// ErrResponseExists is returned when a response with the id is stored.
var ErrResponseExists = errors.New("a response with this id is already stored")

const responseColumns = "id, owner, model, target, upstream_stored, input, response, created_at, expires_at, affinity"

// PutResponse stores a response.
func (s *Store) PutResponse(ctx context.Context, r Response) error {
	_, err := s.db.ExecContext(ctx, s.rebind("INSERT INTO responses ("+responseColumns+") VALUES (?,?,?,?,?,?,?,?,?,?)"),
		cleanText(r.ID), cleanText(r.Owner), cleanText(r.Model), cleanText(r.Target), r.UpstreamStored,
		cleanBytes(r.Input), cleanBytes(r.Response), r.CreatedAt.UnixMilli(), r.ExpiresAt.UnixMilli(), r.Affinity)
	if err != nil && isUniqueViolation(err) {
		return ErrResponseExists
	}
	return err
}

// ResponseByID returns the response id owned by owner that has not expired
// at now; another owner's is not found, exactly like a missing one.
func (s *Store) ResponseByID(ctx context.Context, id, owner string, now time.Time) (Response, error) {
	var r Response
	var created, expires int64
	err := s.db.QueryRowContext(ctx, s.rebind("SELECT "+responseColumns+" FROM responses WHERE id = ? AND owner = ? AND expires_at > ?"),
		id, owner, now.UnixMilli()).Scan(&r.ID, &r.Owner, &r.Model, &r.Target, &r.UpstreamStored, &r.Input, &r.Response, &created, &expires, &r.Affinity)
	if err != nil {
		return Response{}, err
	}
	r.CreatedAt, r.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	return r, nil
}

// DeleteResponse deletes the response id owned by owner; a missing one (or
// another owner's) is sql.ErrNoRows.
func (s *Store) DeleteResponse(ctx context.Context, id, owner string) error {
	res, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM responses WHERE id = ? AND owner = ?"), id, owner)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return sql.ErrNoRows
	}
	return err
}

// PurgeResponses deletes the responses expired at now and reports how
// many there were.
func (s *Store) PurgeResponses(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM responses WHERE expires_at <= ?"), now.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
