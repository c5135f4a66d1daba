-- +goose Up
-- Responses the gateway stored for clients of the Responses API
-- (store: true): what previous_response_id continues and
-- GET /v1/responses/{id} returns. owner is the key that made it ("" for
-- the master key); input is the whole conversation sent (previous turns
-- expanded), response the response object as the client got it.
CREATE TABLE responses (
  id              TEXT PRIMARY KEY,
  owner           TEXT NOT NULL,
  model           TEXT NOT NULL,
  target          TEXT NOT NULL,
  upstream_stored BOOLEAN NOT NULL DEFAULT FALSE,
  input           TEXT NOT NULL,
  response        TEXT NOT NULL,
  created_at      BIGINT NOT NULL,
  expires_at      BIGINT NOT NULL
);
CREATE INDEX responses_expires_at ON responses (expires_at);

-- +goose Down
DROP TABLE responses;
