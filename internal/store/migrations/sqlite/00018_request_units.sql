-- +goose Up
-- What a record's endpoint billed apart from tokens (images made, seconds
-- of audio, characters spoken, search queries), and its kind ('' for
-- none): its cost is in cost_nano_usd with the tokens'. Adding columns
-- with constant defaults rewrites no row.
ALTER TABLE requests ADD COLUMN units BIGINT NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN unit TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE requests DROP COLUMN unit;
ALTER TABLE requests DROP COLUMN units;
