-- +goose Up
-- usage_hourly and usage_daily sum by endpoint too, for usage by endpoint
-- (/v1/embeddings, /v1/audio/transcriptions, …) read from roll-ups. The
-- rows made before have no endpoint (''): their hours' records may be
-- gone (ledger_retention), so they are kept as they are rather than
-- summed again. SQLite cannot change a primary key: the tables are made
-- anew and their rows copied.
CREATE TABLE usage_hourly_new (
  hour                  INTEGER NOT NULL,
  model                 TEXT NOT NULL,
  model_group           TEXT NOT NULL,
  provider              TEXT NOT NULL,
  endpoint              TEXT NOT NULL,
  is_usage              INTEGER NOT NULL,
  requests              INTEGER NOT NULL,
  errors                INTEGER NOT NULL,
  input_tokens          INTEGER NOT NULL,
  cache_read_tokens     INTEGER NOT NULL,
  cache_write_5m_tokens INTEGER NOT NULL,
  cache_write_1h_tokens INTEGER NOT NULL,
  output_tokens         INTEGER NOT NULL,
  reasoning_tokens      INTEGER NOT NULL,
  cost_nano_usd         INTEGER,
  unpriced              INTEGER NOT NULL,
  estimated             INTEGER NOT NULL,
  cache_savings_nano    INTEGER NOT NULL DEFAULT 0,
  cache_savings_known   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (hour, model, model_group, provider, endpoint, is_usage)
) WITHOUT ROWID;
INSERT INTO usage_hourly_new (hour, model, model_group, provider, endpoint, is_usage, requests, errors, input_tokens,
  cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd,
  unpriced, estimated, cache_savings_nano, cache_savings_known)
SELECT hour, model, model_group, provider, '', is_usage, requests, errors, input_tokens,
  cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd,
  unpriced, estimated, cache_savings_nano, cache_savings_known FROM usage_hourly;
DROP TABLE usage_hourly;
ALTER TABLE usage_hourly_new RENAME TO usage_hourly;

CREATE TABLE usage_daily_new (
  day                   INTEGER NOT NULL,
  model                 TEXT NOT NULL,
  model_group           TEXT NOT NULL,
  provider              TEXT NOT NULL,
  endpoint              TEXT NOT NULL,
  is_usage              INTEGER NOT NULL,
  requests              INTEGER NOT NULL,
  errors                INTEGER NOT NULL,
  input_tokens          INTEGER NOT NULL,
  cache_read_tokens     INTEGER NOT NULL,
  cache_write_5m_tokens INTEGER NOT NULL,
  cache_write_1h_tokens INTEGER NOT NULL,
  output_tokens         INTEGER NOT NULL,
  reasoning_tokens      INTEGER NOT NULL,
  cost_nano_usd         INTEGER,
  unpriced              INTEGER NOT NULL,
  estimated             INTEGER NOT NULL,
  cache_savings_nano    INTEGER NOT NULL DEFAULT 0,
  cache_savings_known   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, model, model_group, provider, endpoint, is_usage)
) WITHOUT ROWID;
INSERT INTO usage_daily_new (day, model, model_group, provider, endpoint, is_usage, requests, errors, input_tokens,
  cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd,
  unpriced, estimated, cache_savings_nano, cache_savings_known)
SELECT day, model, model_group, provider, '', is_usage, requests, errors, input_tokens,
  cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd,
  unpriced, estimated, cache_savings_nano, cache_savings_known FROM usage_daily;
DROP TABLE usage_daily;
ALTER TABLE usage_daily_new RENAME TO usage_daily;

-- +goose Down
-- Rows that differ only by endpoint are summed back into one.
CREATE TABLE usage_hourly_new (
  hour INTEGER NOT NULL, model TEXT NOT NULL, model_group TEXT NOT NULL, provider TEXT NOT NULL, is_usage INTEGER NOT NULL,
  requests INTEGER NOT NULL, errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL,
  cache_write_5m_tokens INTEGER NOT NULL, cache_write_1h_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL, cost_nano_usd INTEGER, unpriced INTEGER NOT NULL, estimated INTEGER NOT NULL,
  cache_savings_nano INTEGER NOT NULL DEFAULT 0, cache_savings_known INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (hour, model, model_group, provider, is_usage)
) WITHOUT ROWID;
INSERT INTO usage_hourly_new SELECT hour, model, model_group, provider, is_usage, SUM(requests), SUM(errors), SUM(input_tokens),
  SUM(cache_read_tokens), SUM(cache_write_5m_tokens), SUM(cache_write_1h_tokens), SUM(output_tokens), SUM(reasoning_tokens),
  SUM(cost_nano_usd), SUM(unpriced), SUM(estimated), SUM(cache_savings_nano), SUM(cache_savings_known)
  FROM usage_hourly GROUP BY hour, model, model_group, provider, is_usage;
DROP TABLE usage_hourly;
ALTER TABLE usage_hourly_new RENAME TO usage_hourly;
CREATE TABLE usage_daily_new (
  day INTEGER NOT NULL, model TEXT NOT NULL, model_group TEXT NOT NULL, provider TEXT NOT NULL, is_usage INTEGER NOT NULL,
  requests INTEGER NOT NULL, errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL,
  cache_write_5m_tokens INTEGER NOT NULL, cache_write_1h_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL, cost_nano_usd INTEGER, unpriced INTEGER NOT NULL, estimated INTEGER NOT NULL,
  cache_savings_nano INTEGER NOT NULL DEFAULT 0, cache_savings_known INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, model, model_group, provider, is_usage)
) WITHOUT ROWID;
INSERT INTO usage_daily_new SELECT day, model, model_group, provider, is_usage, SUM(requests), SUM(errors), SUM(input_tokens),
  SUM(cache_read_tokens), SUM(cache_write_5m_tokens), SUM(cache_write_1h_tokens), SUM(output_tokens), SUM(reasoning_tokens),
  SUM(cost_nano_usd), SUM(unpriced), SUM(estimated), SUM(cache_savings_nano), SUM(cache_savings_known)
  FROM usage_daily GROUP BY day, model, model_group, provider, is_usage;
DROP TABLE usage_daily;
ALTER TABLE usage_daily_new RENAME TO usage_daily;
