-- Reconciliation inputs (issue #14): what the reconciliation of a bank account needs and
-- the ledger did not keep yet.
--
-- A statement entry's identifiers beyond its columns, as a JSON object (`model::EntryRecord`
-- `refs`): the camt batch it books (`NtryDtls/Btch/PmtInfId`, else `Btch/MsgId`), the UETR,
-- InstrId and return reason of its one transaction detail, or each detail's identifiers
-- and amount when it books several. NULL when it has none (every BAI2 and MT940 entry).
-- Not fingerprinted: an entry recorded before this migration is a duplicate on re-upload.
-- TEXT as on SQLite, so that both backends give back the same bytes.
ALTER TABLE statement_entries ADD COLUMN refs TEXT;

-- A run may also be a reconciliation of a bank account (`clearledger reconcile`). The
-- check made by 0005's `ALTER TABLE runs ADD COLUMN kind … CHECK (…)` got PostgreSQL's
-- default name for a column constraint, `runs_kind_check`: dropped and made again, wider.
ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE runs ADD CONSTRAINT runs_kind_check
    CHECK (kind IN ('ingest', 'resolve', 'reverse', 'reconcile'));
