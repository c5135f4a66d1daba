-- +goose Up
-- A stored response keeps only its own turn: prev_id names the stored
-- response its request continued ("" for none), and input holds only the
-- items that request added; the conversation is the chain of links.
-- root is the id of its conversation's first response: a conversation's
-- responses are purged together, once the last of them has expired.
-- Rows stored before this migration hold the whole conversation in input
-- and no link, which reads the same. deleted hides a response that a
-- later one still continues from: its items stay until that one goes.
ALTER TABLE responses ADD COLUMN prev_id TEXT NOT NULL DEFAULT '';
ALTER TABLE responses ADD COLUMN root TEXT NOT NULL DEFAULT '';
ALTER TABLE responses ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
UPDATE responses SET root = id;
CREATE INDEX responses_prev_id ON responses (prev_id);
CREATE INDEX responses_root ON responses (root, expires_at);

-- +goose Down
-- The old schema holds whole conversations only: linked rows go.
DELETE FROM responses WHERE prev_id <> '' OR deleted <> 0;
DROP INDEX responses_root;
DROP INDEX responses_prev_id;
ALTER TABLE responses DROP COLUMN deleted;
ALTER TABLE responses DROP COLUMN root;
ALTER TABLE responses DROP COLUMN prev_id;
