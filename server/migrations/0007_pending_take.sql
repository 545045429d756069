-- A decision no longer deletes its pending call up front: it takes it (taken_by, a token,
-- until taken_until) and the call's row is deleted in the same transaction as the call's
-- side effect. A server killed in between leaves the call pending (the take expires), never
-- a call that was decided but did nothing, nor one that can run twice.
ALTER TABLE pending_calls ADD COLUMN taken_by TEXT;
ALTER TABLE pending_calls ADD COLUMN taken_until TEXT;
