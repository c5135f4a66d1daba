-- +goose Up
-- endpoint is the gateway endpoint a request called ("/v1/messages",
-- "/v1/models", "/v1/models/{id}", …; the path itself for one that matched
-- no endpoint); usage sums count only the inference endpoints. '' marks a
-- record made before it was recorded.
ALTER TABLE requests ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
-- canonical_model is the configured model the client's name (model)
-- resolved to, an alias or a name the key may not use included; '' when
-- the name matched no configured model. Usage by model groups by it.
-- Meaningful only where endpoint is set: older records have '' here.
ALTER TABLE requests ADD COLUMN canonical_model TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE requests DROP COLUMN canonical_model;
ALTER TABLE requests DROP COLUMN endpoint;
