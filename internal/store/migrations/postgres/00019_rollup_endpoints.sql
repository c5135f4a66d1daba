-- +goose Up
-- usage_hourly and usage_daily sum by endpoint too, for usage by endpoint
-- read from roll-ups. The rows made before have no endpoint (''): their
-- hours' records may be gone (ledger_retention), so they stay as they are.
ALTER TABLE usage_hourly ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_hourly DROP CONSTRAINT usage_hourly_pkey;
ALTER TABLE usage_hourly ADD PRIMARY KEY (hour, model, model_group, provider, endpoint, is_usage);
ALTER TABLE usage_daily ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_daily DROP CONSTRAINT usage_daily_pkey;
ALTER TABLE usage_daily ADD PRIMARY KEY (day, model, model_group, provider, endpoint, is_usage);

-- +goose Down
-- Rows that differ only by endpoint are summed back into one.
CREATE TEMPORARY TABLE hourly_sums AS SELECT hour, model, model_group, provider, is_usage, SUM(requests) AS requests,
  SUM(errors) AS errors, SUM(input_tokens) AS input_tokens, SUM(cache_read_tokens) AS cache_read_tokens,
  SUM(cache_write_5m_tokens) AS cache_write_5m_tokens, SUM(cache_write_1h_tokens) AS cache_write_1h_tokens,
  SUM(output_tokens) AS output_tokens, SUM(reasoning_tokens) AS reasoning_tokens, SUM(cost_nano_usd) AS cost_nano_usd,
  SUM(unpriced) AS unpriced, SUM(estimated) AS estimated, SUM(cache_savings_nano) AS cache_savings_nano,
  SUM(cache_savings_known) AS cache_savings_known
  FROM usage_hourly GROUP BY hour, model, model_group, provider, is_usage;
DELETE FROM usage_hourly;
ALTER TABLE usage_hourly DROP CONSTRAINT usage_hourly_pkey;
ALTER TABLE usage_hourly DROP COLUMN endpoint;
ALTER TABLE usage_hourly ADD PRIMARY KEY (hour, model, model_group, provider, is_usage);
INSERT INTO usage_hourly (hour, model, model_group, provider, is_usage, requests, errors, input_tokens, cache_read_tokens,
  cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd, unpriced, estimated,
  cache_savings_nano, cache_savings_known)
  SELECT hour, model, model_group, provider, is_usage, requests, errors, input_tokens, cache_read_tokens,
  cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd, unpriced, estimated,
  cache_savings_nano, cache_savings_known FROM hourly_sums;
DROP TABLE hourly_sums;
CREATE TEMPORARY TABLE daily_sums AS SELECT day, model, model_group, provider, is_usage, SUM(requests) AS requests,
  SUM(errors) AS errors, SUM(input_tokens) AS input_tokens, SUM(cache_read_tokens) AS cache_read_tokens,
  SUM(cache_write_5m_tokens) AS cache_write_5m_tokens, SUM(cache_write_1h_tokens) AS cache_write_1h_tokens,
  SUM(output_tokens) AS output_tokens, SUM(reasoning_tokens) AS reasoning_tokens, SUM(cost_nano_usd) AS cost_nano_usd,
  SUM(unpriced) AS unpriced, SUM(estimated) AS estimated, SUM(cache_savings_nano) AS cache_savings_nano,
  SUM(cache_savings_known) AS cache_savings_known
  FROM usage_daily GROUP BY day, model, model_group, provider, is_usage;
DELETE FROM usage_daily;
ALTER TABLE usage_daily DROP CONSTRAINT usage_daily_pkey;
ALTER TABLE usage_daily DROP COLUMN endpoint;
ALTER TABLE usage_daily ADD PRIMARY KEY (day, model, model_group, provider, is_usage);
INSERT INTO usage_daily (day, model, model_group, provider, is_usage, requests, errors, input_tokens, cache_read_tokens,
  cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd, unpriced, estimated,
  cache_savings_nano, cache_savings_known)
  SELECT day, model, model_group, provider, is_usage, requests, errors, input_tokens, cache_read_tokens,
  cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd, unpriced, estimated,
  cache_savings_nano, cache_savings_known FROM daily_sums;
DROP TABLE daily_sums;
