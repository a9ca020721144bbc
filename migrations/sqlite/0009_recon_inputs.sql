-- Reconciliation inputs (issue #14): what the reconciliation of a bank account needs and
-- the ledger did not keep yet.
--
-- A statement entry's identifiers beyond its columns, as a JSON object (`model::EntryRecord`
-- `refs`): the camt batch it books (`NtryDtls/Btch/PmtInfId`, else `Btch/MsgId`), the UETR,
-- InstrId and return reason of its one transaction detail, or each detail's identifiers
-- and amount when it books several. NULL when it has none (every BAI2 and MT940 entry).
-- Not fingerprinted: an entry recorded before this migration is a duplicate on re-upload.
ALTER TABLE statement_entries ADD COLUMN refs TEXT;

-- A run may also be a reconciliation of a bank account (`clearledger reconcile`). SQLite
-- cannot change a CHECK constraint: `runs` is rebuilt by the procedure of
-- https://www.sqlite.org/lang_altertable.html ("Making Other Kinds Of Table Schema
-- Changes"): a new table of the same columns (0001, then `kind` of 0005, then `reason`
-- and `actor` of 0005, in that order), its rows copied, the old table dropped, the new
-- one renamed, its index made again. The ledger applies its migrations with foreign keys
-- off (the other tables reference `runs`) and checks them before it commits
-- (`PRAGMA foreign_key_check`, src/ledger/sqlite.rs). The AUTOINCREMENT sequence is kept:
-- a run id is never handed out twice, not even one of a run deleted since.
CREATE TABLE runs_new (
    run_id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant          TEXT    NOT NULL,
    file_id         TEXT,
    sha256          TEXT    NOT NULL,
    format          TEXT    NOT NULL,
    source_name     TEXT    NOT NULL,
    started_at      TEXT    NOT NULL,
    finished_at     TEXT,
    status          TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'rejected')),
    records         INTEGER NOT NULL DEFAULT 0,
    posted          INTEGER NOT NULL DEFAULT 0,
    duplicates      INTEGER NOT NULL DEFAULT 0,
    conflicts       INTEGER NOT NULL DEFAULT 0,
    held            INTEGER NOT NULL DEFAULT 0,
    posted_amount_minor INTEGER NOT NULL DEFAULT 0,
    errors          INTEGER NOT NULL DEFAULT 0,
    warnings        INTEGER NOT NULL DEFAULT 0,
    kind            TEXT    NOT NULL DEFAULT 'ingest'
        CHECK (kind IN ('ingest', 'resolve', 'reverse', 'reconcile')),
    reason          TEXT,
    actor           TEXT
);
INSERT INTO runs_new (run_id, tenant, file_id, sha256, format, source_name, started_at,
                      finished_at, status, records, posted, duplicates, conflicts, held,
                      posted_amount_minor, errors, warnings, kind, reason, actor)
    SELECT run_id, tenant, file_id, sha256, format, source_name, started_at,
           finished_at, status, records, posted, duplicates, conflicts, held,
           posted_amount_minor, errors, warnings, kind, reason, actor
    FROM runs;
-- The new table's sequence: at least the old one's (which DROP TABLE deletes); RENAME
-- renames it with the table.
UPDATE sqlite_sequence
    SET seq = (SELECT max(seq) FROM sqlite_sequence WHERE name IN ('runs', 'runs_new'))
    WHERE name = 'runs_new';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'runs_new', seq FROM sqlite_sequence
    WHERE name = 'runs' AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'runs_new');
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_tenant_file ON runs (tenant, file_id);
