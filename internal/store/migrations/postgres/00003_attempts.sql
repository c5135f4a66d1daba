-- +goose Up
-- Every upstream attempt of a request, as a JSON array of {target, status, error, ms}.
ALTER TABLE requests ADD COLUMN attempts TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE requests DROP COLUMN attempts;
