-- +goose Up
-- cache_savings_nano is what prompt caching saved a request, in nano-USD:
-- its cache tokens at the input price less what they cost (negative when
-- cache writes cost more than cache reads saved; 0 without cache tokens).
-- NULL when a cache bucket with tokens, or the input, had no price, and
-- on the records made before it was recorded: the prices they were billed
-- at are not stored, so it cannot be back-filled.
ALTER TABLE requests ADD COLUMN cache_savings_nano INTEGER;

-- The roll-ups (00007, 00010) sum it over the records whose saving is
-- known, and count those records in cache_savings_known: a row's saving
-- is known when that count is above 0, and the records it leaves out are
-- requests - cache_savings_known. The rows made before this migration
-- keep 0 in both, as none of their records has a known saving.
ALTER TABLE usage_hourly_keys ADD COLUMN cache_savings_nano INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hourly_keys ADD COLUMN cache_savings_known INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hourly ADD COLUMN cache_savings_nano INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hourly ADD COLUMN cache_savings_known INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_daily ADD COLUMN cache_savings_nano INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_daily ADD COLUMN cache_savings_known INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_daily_keys ADD COLUMN cache_savings_nano INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_daily_keys ADD COLUMN cache_savings_known INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE usage_daily_keys DROP COLUMN cache_savings_known;
ALTER TABLE usage_daily_keys DROP COLUMN cache_savings_nano;
ALTER TABLE usage_daily DROP COLUMN cache_savings_known;
ALTER TABLE usage_daily DROP COLUMN cache_savings_nano;
ALTER TABLE usage_hourly DROP COLUMN cache_savings_known;
ALTER TABLE usage_hourly DROP COLUMN cache_savings_nano;
ALTER TABLE usage_hourly_keys DROP COLUMN cache_savings_known;
ALTER TABLE usage_hourly_keys DROP COLUMN cache_savings_nano;
ALTER TABLE requests DROP COLUMN cache_savings_nano;
