-- +goose Up
-- A sign-in's token family as a row of its own: who signed in, with which
-- client, until when at the latest (expires_at, however often its refresh
-- token rotates), the IdP's refresh token (sealed by the gateway, NULL
-- for none) that refreshing asks the IdP with, and whether it was
-- revoked. revoked_at here covers the tokens minted while the family was
-- being revoked, which the UPDATE of tokens did not see.
CREATE TABLE token_families (
  id          TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL,
  team_id     TEXT NOT NULL DEFAULT '',
  client      TEXT NOT NULL DEFAULT '',
  idp_refresh BLOB,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  revoked_at  INTEGER
);
CREATE INDEX token_families_user ON token_families (user_id);
CREATE INDEX token_families_expires_at ON token_families (expires_at);

-- The families of the tokens issued before: they end when their last
-- token does, and are revoked when all their tokens are.
INSERT INTO token_families (id, user_id, team_id, client, created_at, expires_at, revoked_at)
SELECT family_id, MIN(user_id), MIN(team_id), MIN(client), MIN(created_at), MAX(expires_at),
  CASE WHEN COUNT(*) = COUNT(revoked_at) THEN MAX(revoked_at) END
FROM tokens GROUP BY family_id;

-- A device code's approval carries the IdP's refresh token (sealed) from
-- the browser's sign-in to the family its redemption creates.
ALTER TABLE device_codes ADD COLUMN idp_refresh BLOB;

-- +goose Down
ALTER TABLE device_codes DROP COLUMN idp_refresh;
DROP TABLE token_families;
