-- +goose Up
-- People and teams signed in through the identity provider (or made by
-- the admin API), and what signing in keeps: the gateway's own tokens,
-- device-code and browser flows in progress, and an audit log. All of it
-- lives here, not in a replica's memory, so that every replica agrees.
-- JSON columns hold what keys' do (limits objects, model arrays).
--   subject         the IdP identity (the configured user claim), unique
--   primary_team_id the team usage is charged to by default, '' for none
--   source          'idp' (made at sign-in) or 'admin' (the admin API)
CREATE TABLE users (
  id              TEXT PRIMARY KEY,
  subject         TEXT NOT NULL UNIQUE,
  email           TEXT NOT NULL DEFAULT '',
  name            TEXT NOT NULL DEFAULT '',
  primary_team_id TEXT NOT NULL DEFAULT '',
  limits          TEXT NOT NULL DEFAULT '{}',
  models          TEXT NOT NULL DEFAULT '[]',
  disabled        INTEGER NOT NULL DEFAULT 0,
  admin           INTEGER NOT NULL DEFAULT 0,
  source          TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  last_seen_at    INTEGER
);
CREATE INDEX users_primary_team ON users (primary_team_id) WHERE primary_team_id <> '';

-- source is 'config' for the teams of the configuration file, 'admin'
-- for those of the admin API.
CREATE TABLE teams (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  idp_groups    TEXT NOT NULL DEFAULT '[]',
  models        TEXT NOT NULL DEFAULT '[]',
  limits        TEXT NOT NULL DEFAULT '{}',
  member_limits TEXT NOT NULL DEFAULT '{}',
  claude_code   TEXT NOT NULL DEFAULT '{}',
  source        TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);

-- source is 'idp' for a membership from the IdP's groups (resynced at
-- each sign-in), 'admin' for one the admin API added (left alone).
CREATE TABLE team_members (
  team_id    TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  source     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

-- A key may belong to a user, and be charged to a team; NULL for neither.
ALTER TABLE keys ADD COLUMN user_id TEXT;
ALTER TABLE keys ADD COLUMN team_id TEXT;
CREATE INDEX keys_user ON keys (user_id);

-- Tokens the gateway mints at sign-in, by the SHA-256 of their secret.
-- A sign-in's tokens share family_id: a refresh token is used once, and
-- its second use (a stolen copy) revokes the family.
CREATE TABLE tokens (
  hash       BLOB PRIMARY KEY,
  kind       TEXT NOT NULL,   -- 'access' | 'refresh'
  user_id    TEXT NOT NULL,
  team_id    TEXT NOT NULL DEFAULT '',
  family_id  TEXT NOT NULL,
  client     TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER,
  revoked_at INTEGER
);
CREATE INDEX tokens_family ON tokens (family_id);
CREATE INDEX tokens_user ON tokens (user_id);
CREATE INDEX tokens_expires_at ON tokens (expires_at);

-- Device authorisations (RFC 8628) in progress, by the SHA-256 of the
-- device code. user_code is unique: an expired row holding a code is
-- deleted when the code is given out again.
CREATE TABLE device_codes (
  hash         BLOB PRIMARY KEY,
  user_code    TEXT NOT NULL UNIQUE,
  status       TEXT NOT NULL,   -- 'pending' | 'approved' | 'denied' | 'consumed'
  user_id      TEXT NOT NULL DEFAULT '',
  team_id      TEXT NOT NULL DEFAULT '',
  interval_s   INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  last_poll_at INTEGER
);
CREATE INDEX device_codes_expires_at ON device_codes (expires_at);

-- Browser sign-ins in progress (OIDC state, nonce, PKCE verifier), by the
-- SHA-256 of the state; each is taken once.
CREATE TABLE login_flows (
  state_hash BLOB PRIMARY KEY,
  nonce      TEXT NOT NULL,
  verifier   TEXT NOT NULL,
  purpose    TEXT NOT NULL,
  user_code  TEXT NOT NULL DEFAULT '',
  return_to  TEXT NOT NULL DEFAULT '',
  expires_at INTEGER NOT NULL
);
CREATE INDEX login_flows_expires_at ON login_flows (expires_at);

-- Who did what: sign-ins, tokens, keys, teams, users. id orders events.
CREATE TABLE audit_log (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  time        INTEGER NOT NULL,
  actor_kind  TEXT NOT NULL,   -- 'master' | 'user' | 'key' | 'system'
  actor_id    TEXT NOT NULL DEFAULT '',
  action      TEXT NOT NULL,
  target_kind TEXT NOT NULL DEFAULT '',
  target_id   TEXT NOT NULL DEFAULT '',
  detail      TEXT NOT NULL DEFAULT '{}',
  client_ip   TEXT NOT NULL DEFAULT '',
  request_id  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_time ON audit_log (time);
CREATE INDEX audit_log_actor ON audit_log (actor_id, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_target ON audit_log (target_id, id);

-- A console session may be a signed-in user's ('' for a key's or the
-- master key's); admin is whether the user was an operator then.
ALTER TABLE console_sessions ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE console_sessions ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
CREATE INDEX console_sessions_user ON console_sessions (user_id) WHERE user_id <> '';

-- +goose Down
DROP INDEX console_sessions_user;
ALTER TABLE console_sessions DROP COLUMN admin;
ALTER TABLE console_sessions DROP COLUMN user_id;
DROP TABLE audit_log;
DROP TABLE login_flows;
DROP TABLE device_codes;
DROP TABLE tokens;
DROP INDEX keys_user;
ALTER TABLE keys DROP COLUMN team_id;
ALTER TABLE keys DROP COLUMN user_id;
DROP TABLE team_members;
DROP TABLE teams;
DROP TABLE users;
