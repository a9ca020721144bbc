-- The journal's outcome check without a list (issue #16; SQLite only). A CHECK of the form
-- `outcome IN ('duplicate', 'conflict', 'held')` builds an ephemeral table for its list on
-- every row inserted (OpenEphemeral in the insert's program, a B-tree opened and closed):
-- an exact re-upload journals every record, so it paid that a million times for a 1 M-entry
-- file. The same check as three comparisons, the same rows accepted: an exact re-upload of
-- a 1 M-entry NACHA file, no report, 1.22–1.33 s → 0.94–1.08 s (four runs each, alternated).
-- PostgreSQL evaluates its list without such a cost and keeps its constraint as it is.
--
-- SQLite cannot alter a CHECK, so the table is built again (as migration 0003 did):
-- the same columns in the same order, the same keys and indexes.
CREATE TABLE journal_checked (
    run_id              INTEGER NOT NULL REFERENCES runs (run_id),
    record_no           INTEGER NOT NULL,
    tenant              TEXT    NOT NULL,
    outcome             TEXT    NOT NULL CHECK (outcome = 'duplicate' OR outcome = 'conflict' OR outcome = 'held'),
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
    effective_date      TEXT,
    detail              TEXT,
    PRIMARY KEY (run_id, record_no),
    CHECK (outcome = 'held' OR original_posting_id IS NOT NULL),
    CHECK (outcome = 'duplicate' OR (operation IS NOT NULL AND posting_key IS NOT NULL
        AND debit_account IS NOT NULL AND credit_account IS NOT NULL AND amount_minor IS NOT NULL
        AND currency IS NOT NULL AND fingerprint IS NOT NULL))
) WITHOUT ROWID;
INSERT INTO journal_checked
    SELECT run_id, record_no, tenant, outcome, original_posting_id, operation, posting_key,
           trace_number, debit_account, credit_account, amount_minor, currency, fingerprint,
           differences, reason, effective_date, detail
    FROM journal;
DROP TABLE journal;
ALTER TABLE journal_checked RENAME TO journal;
CREATE INDEX journal_original ON journal (original_posting_id);
CREATE INDEX journal_held_key ON journal (tenant, operation, posting_key) WHERE original_posting_id IS NULL;
CREATE INDEX journal_held ON journal (tenant, run_id, record_no) WHERE outcome = 'held';
