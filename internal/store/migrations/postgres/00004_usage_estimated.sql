-- +goose Up
-- TRUE when the gateway estimated the token counts because the upstream
-- never reported usage (the stream was cut, or the client left early).
ALTER TABLE requests ADD COLUMN usage_estimated BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE requests DROP COLUMN usage_estimated;
