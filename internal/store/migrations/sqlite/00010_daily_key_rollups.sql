-- +goose Up
-- Each key's usage by UTC day, over all its models and providers: what
-- usage by key over a long window sums (store.Usage), a row a key a day
-- where usage_hourly_keys has one per hour, model and provider.
-- InsertRequests adds to it in the transaction that writes the records,
-- as to the other roll-ups (00007); it is back-filled from them.
CREATE TABLE usage_daily_keys (
  day                   INTEGER NOT NULL,
  key_id                TEXT NOT NULL,
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
  PRIMARY KEY (day, key_id, is_usage)
) WITHOUT ROWID;

INSERT INTO usage_daily_keys (day, key_id, is_usage, requests, errors,
  input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens,
  cost_nano_usd, unpriced, estimated)
SELECT hour - ((hour % 86400000) + 86400000) % 86400000, key_id, is_usage, SUM(requests), SUM(errors),
  SUM(input_tokens), SUM(cache_read_tokens), SUM(cache_write_5m_tokens), SUM(cache_write_1h_tokens),
  SUM(output_tokens), SUM(reasoning_tokens), SUM(cost_nano_usd), SUM(unpriced), SUM(estimated)
FROM usage_hourly_keys
GROUP BY 1, key_id, is_usage;

-- +goose Down
DROP TABLE usage_daily_keys;
