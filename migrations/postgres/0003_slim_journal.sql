-- The journal keeps, per repeat, what the original posting cannot tell. A duplicate has
-- its original's content, fingerprint for fingerprint (that is what a duplicate is), so
-- its row is (run, record, outcome, original): the report and lookups read the key,
-- accounts and amount from the original posting, and the file and time from the run.
-- Conflicts and held records keep the record as it was seen. A re-upload of a million
-- records so writes ≈40 bytes a record instead of ≈300, behind no text index.
ALTER TABLE journal
    ALTER COLUMN operation DROP NOT NULL,
    ALTER COLUMN posting_key DROP NOT NULL,
    ALTER COLUMN debit_account DROP NOT NULL,
    ALTER COLUMN credit_account DROP NOT NULL,
    ALTER COLUMN amount_minor DROP NOT NULL,
    ALTER COLUMN currency DROP NOT NULL,
    ALTER COLUMN fingerprint DROP NOT NULL,
    DROP COLUMN file_id,
    DROP COLUMN original_file_id,
    DROP COLUMN original_record_no,
    DROP COLUMN original_run_id,
    DROP COLUMN original_posted_at,
    DROP COLUMN seen_at,
    ADD CONSTRAINT journal_original_named CHECK (outcome = 'held' OR original_posting_id IS NOT NULL),
    ADD CONSTRAINT journal_seen_kept CHECK (outcome = 'duplicate' OR (operation IS NOT NULL AND posting_key IS NOT NULL
        AND debit_account IS NOT NULL AND credit_account IS NOT NULL AND amount_minor IS NOT NULL
        AND currency IS NOT NULL AND fingerprint IS NOT NULL));
DROP INDEX journal_key;
-- No foreign key on original_posting_id: the id is read from postings in the same
-- transaction, and postings are never deleted; the check would cost a trigger and a posting
-- lookup per journal row.
ALTER TABLE journal DROP CONSTRAINT journal_original_posting_id_fkey;
-- The repeats of a posting (lookup), and held records by key (they have no original).
CREATE INDEX journal_original ON journal (original_posting_id);
CREATE INDEX journal_held_key ON journal (tenant, operation, posting_key) WHERE original_posting_id IS NULL;
-- An exact re-upload reads the earlier run's (record_no, posting_id) from this index
-- alone, never the posting rows.
DROP INDEX postings_run;
CREATE INDEX postings_run ON postings (run_id, record_no);
