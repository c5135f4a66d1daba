-- +goose Up
-- 1 when the gateway estimated the token counts because the upstream never
-- reported usage (the stream was cut, or the client left early).
ALTER TABLE requests ADD COLUMN usage_estimated INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE requests DROP COLUMN usage_estimated;
