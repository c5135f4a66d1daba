-- +goose Up
-- Sessions of the operator console, kept here (not in a replica's memory)
-- so that any replica knows them and signing out ends one everywhere. id
-- is the SHA-256 of the cookie's secret: the table never holds a usable
-- session. key_id is the virtual key signed in, "" for the master key.
CREATE TABLE console_sessions (
  id         TEXT PRIMARY KEY,
  key_id     TEXT NOT NULL,
  csrf       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
