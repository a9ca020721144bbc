-- The rules a reconciliation ran with, as the canonical JSON its rules_hash is the SHA-256
-- of: a correction asked later for one of its items (the console's "post a correction")
-- reconciles again with the same rules. NULL for runs recorded before this column.
ALTER TABLE reconciliations ADD COLUMN rules TEXT;
