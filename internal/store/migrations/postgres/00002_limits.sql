-- +goose Up
-- Limits and budgets per key (JSON objects; empty = none), and per key and model.
ALTER TABLE keys ADD COLUMN limits TEXT NOT NULL DEFAULT '{}';
ALTER TABLE keys ADD COLUMN model_limits TEXT NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE keys DROP COLUMN model_limits;
ALTER TABLE keys DROP COLUMN limits;
