-- +goose Up
-- Each key's usage by UTC day, over all its models and providers: what
-- usage by key over a long window sums (store.Usage), a row a key a day
-- where usage_hourly_keys has one per hour, model and provider.
-- InsertRequests adds to it in the transaction that writes the records,
-- as to the other roll-ups (00007); it is back-filled from them.
CREATE TABLE usage_daily_keys (
  day                   BIGINT NOT NULL,
  key_id                TEXT NOT NULL,
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
  PRIMARY KEY (day, key_id, is_usage)
);

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
