-- The journal keeps, per repeat, what the original posting cannot tell. A duplicate has
-- its original's content, fingerprint for fingerprint (that is what a duplicate is), so
-- its row is (run, record, outcome, original): the report and lookups read the key,
-- accounts and amount from the original posting, and the file and time from the run.
-- Conflicts and held records keep the record as it was seen. A re-upload of a million
-- records so writes ≈20 bytes a record instead of ≈300, behind no text index.
CREATE TABLE journal_slim (
    run_id              INTEGER NOT NULL REFERENCES runs (run_id),
    record_no           INTEGER NOT NULL,
    tenant              TEXT    NOT NULL,
    outcome             TEXT    NOT NULL CHECK (outcome IN ('duplicate', 'conflict', 'held')),
    -- No foreign key: the id is read from postings in the same transaction, and postings
    -- are never deleted; the check would read a posting row per journal row.
    original_posting_id INTEGER,
    operation           TEXT,
    posting_key         TEXT,
    trace_number        TEXT,
    debit_account       TEXT,
    credit_account      TEXT,
    amount_minor        INTEGER,
    currency            TEXT,
    fingerprint         TEXT,
    differences         TEXT,
    reason              TEXT,
    PRIMARY KEY (run_id, record_no),
    CHECK (outcome = 'held' OR original_posting_id IS NOT NULL),
    CHECK (outcome = 'duplicate' OR (operation IS NOT NULL AND posting_key IS NOT NULL
        AND debit_account IS NOT NULL AND credit_account IS NOT NULL AND amount_minor IS NOT NULL
        AND currency IS NOT NULL AND fingerprint IS NOT NULL))
) WITHOUT ROWID;
INSERT INTO journal_slim
    SELECT run_id, record_no, tenant, outcome, original_posting_id, operation, posting_key,
           trace_number, debit_account, credit_account, amount_minor, currency, fingerprint,
           differences, reason
    FROM journal;
DROP TABLE journal;
ALTER TABLE journal_slim RENAME TO journal;
-- The repeats of a posting (lookup), and held records by key (they have no original).
CREATE INDEX journal_original ON journal (original_posting_id);
CREATE INDEX journal_held_key ON journal (tenant, operation, posting_key) WHERE original_posting_id IS NULL;
-- An exact re-upload reads the earlier run's (record_no, posting_id) from this index
-- alone, never the posting rows.
DROP INDEX postings_run;
CREATE INDEX postings_run ON postings (run_id, record_no);
