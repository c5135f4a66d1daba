-- +goose Up
-- The request log's filters that the other indexes do not serve: records
-- with no lane (no upstream was chosen: refused, unknown model) and
-- failed records by status. Both are a small share of a ledger, so these
-- partial indexes cost little to keep, where a scan for a rare value
-- reads the whole table. store.Requests repeats each index's condition
-- in its query, so that the planner can prove it may use them.
CREATE INDEX requests_no_lane ON requests (time) WHERE lane = '';
CREATE INDEX requests_failed ON requests (status, time) WHERE status >= 400;

-- +goose Down
DROP INDEX requests_failed;
DROP INDEX requests_no_lane;
