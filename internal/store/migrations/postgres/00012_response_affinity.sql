-- +goose Up
-- affinity is the routing key of the conversation a stored response
-- belongs to (the key its first request had), so that a request
-- continuing it with previous_response_id goes where the conversation's
-- prompt cache is. 0: none recorded (the key is then read from the whole
-- stored conversation).
ALTER TABLE responses ADD COLUMN affinity BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE responses DROP COLUMN affinity;
