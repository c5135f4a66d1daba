-- +goose Up
-- Hourly roll-ups of the usage ledger. Usage and budget reloads sum them
-- for the whole hours of a window and read requests only for the partial
-- hours at its edges, so their cost does not grow with the ledger.
-- InsertRequests adds each batch's new records to these tables in the
-- transaction that writes them; the retention of detail records
-- (database.ledger_retention) never deletes from them.
--
-- usage_hourly_keys is per key. It has no index by key: a batch adds to
-- the current hour's rows, together in the primary key, where an index by
-- key would take its writes all over; a key's hours are looked up one by
-- one instead (store.keyHours). usage_hourly is the same over all keys,
-- what the queries without a key read: a few rows an hour, however many
-- keys there are; usage_daily is usage_hourly by UTC day, for the whole
-- days of a long window.
--   hour, day   unix milliseconds of the UTC hour's (day's) start
--   key_id      '' for the master key (a NULL could not be in the
--               ON CONFLICT target)
--   model       the name the client sent: budgets filter by it
--   model_group what usage by model groups by: the canonical model (the
--               name, before 00006), '(unknown model)' when empty
--   is_usage    1 for the records usage counts (the inference endpoints;
--               see store.usageScope), 0 for the rest: budgets count them
--   cost_nano_usd NULL when no record of the row was priced
CREATE TABLE usage_hourly_keys (
  hour                  INTEGER NOT NULL,
  key_id                TEXT NOT NULL,
  model                 TEXT NOT NULL,
  model_group           TEXT NOT NULL,
  provider              TEXT NOT NULL,
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
  PRIMARY KEY (hour, key_id, model, model_group, provider, is_usage)
) WITHOUT ROWID;

CREATE TABLE usage_hourly (
  hour                  INTEGER NOT NULL,
  model                 TEXT NOT NULL,
  model_group           TEXT NOT NULL,
  provider              TEXT NOT NULL,
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
  PRIMARY KEY (hour, model, model_group, provider, is_usage)
) WITHOUT ROWID;

CREATE TABLE usage_daily (
  day                   INTEGER NOT NULL,
  model                 TEXT NOT NULL,
  model_group           TEXT NOT NULL,
  provider              TEXT NOT NULL,
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
  PRIMARY KEY (day, model, model_group, provider, is_usage)
) WITHOUT ROWID;

-- Back-fill from the records already written. The hour is rounded down
-- (toward minus infinity) as InsertRequests rounds it; the expressions
-- are those of store.modelGroup, store.usageScope and UsageGroup.Errors.
INSERT INTO usage_hourly_keys (hour, key_id, model, model_group, provider, is_usage, requests, errors,
  input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens,
  cost_nano_usd, unpriced, estimated)
SELECT time - ((time % 3600000) + 3600000) % 3600000,
  COALESCE(key_id, ''),
  model,
  COALESCE(NULLIF(CASE WHEN endpoint = '' THEN model ELSE canonical_model END, ''), '(unknown model)'),
  provider,
  CASE WHEN endpoint IN ('/v1/messages', '/v1/messages/count_tokens', '/v1/chat/completions', '/v1/responses', '/v1/responses/input_tokens')
    OR (endpoint = '' AND (model <> '' OR status >= 400 OR error_type <> '')) THEN 1 ELSE 0 END,
  COUNT(*),
  SUM(CASE WHEN status >= 400 OR error_type <> '' THEN 1 ELSE 0 END),
  SUM(input_tokens), SUM(cache_read_tokens), SUM(cache_write_5m_tokens), SUM(cache_write_1h_tokens),
  SUM(output_tokens), SUM(reasoning_tokens),
  SUM(cost_nano_usd),
  SUM(CASE WHEN cost_nano_usd IS NULL THEN 1 ELSE 0 END),
  SUM(CASE WHEN usage_estimated THEN 1 ELSE 0 END)
FROM requests
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO usage_hourly (hour, model, model_group, provider, is_usage, requests, errors,
  input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens,
  cost_nano_usd, unpriced, estimated)
SELECT hour, model, model_group, provider, is_usage, SUM(requests), SUM(errors),
  SUM(input_tokens), SUM(cache_read_tokens), SUM(cache_write_5m_tokens), SUM(cache_write_1h_tokens),
  SUM(output_tokens), SUM(reasoning_tokens), SUM(cost_nano_usd), SUM(unpriced), SUM(estimated)
FROM usage_hourly_keys
GROUP BY hour, model, model_group, provider, is_usage;

INSERT INTO usage_daily (day, model, model_group, provider, is_usage, requests, errors,
  input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens,
  cost_nano_usd, unpriced, estimated)
SELECT hour - ((hour % 86400000) + 86400000) % 86400000, model, model_group, provider, is_usage, SUM(requests), SUM(errors),
  SUM(input_tokens), SUM(cache_read_tokens), SUM(cache_write_5m_tokens), SUM(cache_write_1h_tokens),
  SUM(output_tokens), SUM(reasoning_tokens), SUM(cost_nano_usd), SUM(unpriced), SUM(estimated)
FROM usage_hourly
GROUP BY 1, model, model_group, provider, is_usage;

-- +goose Down
DROP TABLE usage_daily;
DROP TABLE usage_hourly;
DROP TABLE usage_hourly_keys;
