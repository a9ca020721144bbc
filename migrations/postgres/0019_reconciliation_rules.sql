-- The rules a reconciliation ran with, as the canonical JSON its rules_hash is the SHA-256
-- of: a correction asked later for one of its items (the console's "post a correction")
-- reconciles again with the same rules. NULL for runs recorded before this column.
ALTER TABLE reconciliations ADD COLUMN rules TEXT;
-- A run's items of one outcome, in report order, a page at a time (the console's filter),
-- without reading the run's other items.
CREATE INDEX recon_items_outcome ON recon_items (run_id, outcome, item_no);
