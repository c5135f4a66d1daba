-- +goose Up
-- The records of an agent session are found by time, not by an index of
-- their own: agent_sessions (00015) holds each session's first and last
-- record's times, and store.Requests reads the time index between them.
-- An index by session_id took a leaf page of its own for nearly every
-- record (sessions are many and interleave), the most costly of the
-- ledger's indexes to keep for the rarest of its filters.
DROP INDEX requests_session_time;

-- +goose Down
CREATE INDEX requests_session_time ON requests (session_id, time) WHERE session_id <> '';
