-- +goose Up
-- Each record names the user it was made for, the team it is charged to
-- and the agent session (Claude Code's session id) it belongs to; '' for
-- none, as on every record made before. The indexes are partial: a
-- ledger without users pays nothing for them. store.Requests repeats
-- their conditions, so that the planner can prove it may use them.
ALTER TABLE requests ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN team_id TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
CREATE INDEX requests_user_time ON requests (user_id, time) WHERE user_id <> '';
CREATE INDEX requests_team_time ON requests (team_id, time) WHERE team_id <> '';
CREATE INDEX requests_session_time ON requests (session_id, time) WHERE session_id <> '';

-- Usage by user and by team, as usage_hourly_keys and usage_daily_keys
-- (00007, 00010) are by key: kind is 'user' or 'team', principal_id the
-- user's or team's id, '' for the records of none (so that the rows of a
-- kind sum to every record). InsertRequests adds to them in the
-- transaction that writes the records. Like usage_hourly_keys they have
-- no index by id: a user's hours are looked up one by one.
CREATE TABLE usage_hourly_principals (
  hour                  BIGINT NOT NULL,
  kind                  TEXT NOT NULL,
  principal_id          TEXT NOT NULL,
  model                 TEXT NOT NULL,
  model_group           TEXT NOT NULL,
  provider              TEXT NOT NULL,
  is_usage              BOOLEAN NOT NULL,
  requests              BIGINT NOT NULL,
  errors                BIGINT NOT NULL,
  input_tokens          BIGINT NOT NULL,
  cache_read_tokens     BIGINT NOT NULL,
  cache_write_5m_tokens BIGINT NOT NULL,
  cache_write_1h_tokens BIGINT NOT NULL,
  output_tokens         BIGINT NOT NULL,
  reasoning_tokens      BIGINT NOT NULL,
  cost_nano_usd         BIGINT,
  unpriced              BIGINT NOT NULL,
  estimated             BIGINT NOT NULL,
  cache_savings_nano    BIGINT NOT NULL,
  cache_savings_known   BIGINT NOT NULL,
  PRIMARY KEY (hour, kind, principal_id, model, model_group, provider, is_usage)
);

CREATE TABLE usage_daily_principals (
  day                   BIGINT NOT NULL,
  kind                  TEXT NOT NULL,
  principal_id          TEXT NOT NULL,
  is_usage              BOOLEAN NOT NULL,
  requests              BIGINT NOT NULL,
  errors                BIGINT NOT NULL,
  input_tokens          BIGINT NOT NULL,
  cache_read_tokens     BIGINT NOT NULL,
  cache_write_5m_tokens BIGINT NOT NULL,
  cache_write_1h_tokens BIGINT NOT NULL,
  output_tokens         BIGINT NOT NULL,
  reasoning_tokens      BIGINT NOT NULL,
  cost_nano_usd         BIGINT,
  unpriced              BIGINT NOT NULL,
  estimated             BIGINT NOT NULL,
  cache_savings_nano    BIGINT NOT NULL,
  cache_savings_known   BIGINT NOT NULL,
  PRIMARY KEY (day, kind, principal_id, is_usage)
);

-- Every record so far is of no user and no team: the back-fill is the
-- roll-ups over all keys, under ''.
INSERT INTO usage_hourly_principals (hour, kind, principal_id, model, model_group, provider, is_usage, requests, errors,
  input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens,
  cost_nano_usd, unpriced, estimated, cache_savings_nano, cache_savings_known)
SELECT hour, k.kind, '', model, model_group, provider, is_usage, requests, errors,
  input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens,
  cost_nano_usd, unpriced, estimated, cache_savings_nano, cache_savings_known
FROM usage_hourly, (SELECT 'user' AS kind UNION ALL SELECT 'team') k;

INSERT INTO usage_daily_principals (day, kind, principal_id, is_usage, requests, errors,
  input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens,
  cost_nano_usd, unpriced, estimated, cache_savings_nano, cache_savings_known)
SELECT day, k.kind, '', is_usage, SUM(requests), SUM(errors),
  SUM(input_tokens), SUM(cache_read_tokens), SUM(cache_write_5m_tokens), SUM(cache_write_1h_tokens),
  SUM(output_tokens), SUM(reasoning_tokens), SUM(cost_nano_usd), SUM(unpriced), SUM(estimated),
  SUM(cache_savings_nano), SUM(cache_savings_known)
FROM usage_daily, (SELECT 'user' AS kind UNION ALL SELECT 'team') k
GROUP BY day, k.kind, is_usage;

-- Agent sessions: the records of one session id summed, per key and user
-- (a session id is the client's, so it is only trusted within them).
-- InsertRequests adds each batch's records in its transaction. team_id
-- and model are those of the latest record; cost_nano_usd is NULL while
-- none was priced; cache_write_tokens sums both cache lifetimes.
CREATE TABLE agent_sessions (
  session_id         TEXT NOT NULL,
  key_id             TEXT NOT NULL,
  user_id            TEXT NOT NULL,
  team_id            TEXT NOT NULL,
  model              TEXT NOT NULL,
  first_seen         BIGINT NOT NULL,
  last_seen          BIGINT NOT NULL,
  requests           BIGINT NOT NULL,
  input_tokens       BIGINT NOT NULL,
  cache_read_tokens  BIGINT NOT NULL,
  cache_write_tokens BIGINT NOT NULL,
  output_tokens      BIGINT NOT NULL,
  cost_nano_usd      BIGINT,
  PRIMARY KEY (session_id, key_id, user_id)
);
CREATE INDEX agent_sessions_last_seen ON agent_sessions (last_seen);
CREATE INDEX agent_sessions_user ON agent_sessions (user_id, last_seen) WHERE user_id <> '';
CREATE INDEX agent_sessions_team ON agent_sessions (team_id, last_seen) WHERE team_id <> '';
CREATE INDEX agent_sessions_key ON agent_sessions (key_id, last_seen);

-- +goose Down
DROP TABLE agent_sessions;
DROP TABLE usage_daily_principals;
DROP TABLE usage_hourly_principals;
DROP INDEX requests_session_time;
DROP INDEX requests_team_time;
DROP INDEX requests_user_time;
ALTER TABLE requests DROP COLUMN session_id;
ALTER TABLE requests DROP COLUMN team_id;
ALTER TABLE requests DROP COLUMN user_id;
