-- +goose Up
CREATE TABLE keys (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    hash         BYTEA NOT NULL UNIQUE,   -- SHA-256 of the secret; the secret itself is never stored
    prefix       TEXT NOT NULL,          -- the first characters, to recognise a key in lists
    models       TEXT NOT NULL DEFAULT '[]',  -- JSON array of allowed model names; empty = all
    metadata     TEXT NOT NULL DEFAULT '{}',  -- JSON object
    created_at   BIGINT NOT NULL,       -- unix milliseconds
    expires_at   BIGINT,
    last_used_at BIGINT,
    revoked      BOOLEAN NOT NULL DEFAULT FALSE
);

-- One row per data-plane request: the usage ledger.
CREATE TABLE requests (
    id              TEXT PRIMARY KEY,    -- the tollgate-request-id
    time            BIGINT NOT NULL,    -- unix milliseconds
    key_id          TEXT,
    client_protocol TEXT NOT NULL,
    model           TEXT NOT NULL,
    provider        TEXT NOT NULL,
    upstream_model  TEXT NOT NULL,
    lane            TEXT NOT NULL,
    stream          BOOLEAN NOT NULL,
    status          INTEGER NOT NULL,
    error_type      TEXT NOT NULL,
    input_tokens          BIGINT NOT NULL,
    cache_read_tokens     BIGINT NOT NULL,
    cache_write_5m_tokens BIGINT NOT NULL,
    cache_write_1h_tokens BIGINT NOT NULL,
    output_tokens         BIGINT NOT NULL,
    reasoning_tokens      BIGINT NOT NULL,
    cost_nano_usd   BIGINT,             -- NULL when the model has no price
    latency_ms      DOUBLE PRECISION NOT NULL,
    ttfb_ms         DOUBLE PRECISION NOT NULL,
    upstream_ms     DOUBLE PRECISION NOT NULL,
    overhead_ms     DOUBLE PRECISION NOT NULL,
    client_ip       TEXT NOT NULL,
    user_agent      TEXT NOT NULL
);
CREATE INDEX requests_time ON requests (time);
CREATE INDEX requests_key_time ON requests (key_id, time);
CREATE INDEX requests_model_time ON requests (model, time);

-- +goose Down
DROP TABLE requests;
DROP TABLE keys;
