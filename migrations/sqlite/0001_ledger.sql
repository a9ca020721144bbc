-- The ledger: runs, the file claims, postings behind unique natural-key indexes,
-- the journal of every record that did not post, and the findings of every run.
-- Amounts are integer minor units plus an ISO 4217 currency; times are RFC 3339 UTC text.

CREATE TABLE runs (
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
    warnings        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_tenant_file ON runs (tenant, file_id);

-- One row per file identity per tenant: the claim. Inserted first in the ingest
-- transaction; a second ingest of the same identity finds it taken.
CREATE TABLE files (
    tenant          TEXT    NOT NULL,
    file_id         TEXT    NOT NULL,
    format          TEXT    NOT NULL,
    sha256          TEXT,
    first_run_id    INTEGER NOT NULL REFERENCES runs (run_id),
    first_seen_at   TEXT    NOT NULL,
    PRIMARY KEY (tenant, file_id)
);

CREATE TABLE postings (
    posting_id      INTEGER PRIMARY KEY,
    tenant          TEXT    NOT NULL,
    operation       TEXT    NOT NULL,
    posting_key     TEXT    NOT NULL,
    file_id         TEXT    NOT NULL,
    record_no       INTEGER NOT NULL CHECK (record_no > 0),
    trace_number    TEXT,
    debit_account   TEXT    NOT NULL,
    credit_account  TEXT    NOT NULL,
    amount_minor    INTEGER NOT NULL CHECK (amount_minor >= 0),
    currency        TEXT    NOT NULL CHECK (length(currency) = 3),
    effective_date  TEXT,
    fingerprint     TEXT    NOT NULL,
    detail          TEXT    NOT NULL,
    run_id          INTEGER NOT NULL REFERENCES runs (run_id),
    posted_at       TEXT    NOT NULL
);
-- The last line of defence (PRINCIPLES.md §7): no TTL, no way around.
CREATE UNIQUE INDEX postings_natural_key ON postings (tenant, operation, posting_key);
CREATE UNIQUE INDEX postings_source ON postings (tenant, file_id, record_no);
CREATE INDEX postings_trace ON postings (tenant, trace_number);
CREATE INDEX postings_run ON postings (run_id);

-- Every record of a run that did not post, with the original it matched.
CREATE TABLE journal (
    run_id              INTEGER NOT NULL REFERENCES runs (run_id),
    record_no           INTEGER NOT NULL,
    tenant              TEXT    NOT NULL,
    file_id             TEXT    NOT NULL,
    operation           TEXT    NOT NULL,
    posting_key         TEXT    NOT NULL,
    trace_number        TEXT,
    debit_account       TEXT    NOT NULL,
    credit_account      TEXT    NOT NULL,
    amount_minor        INTEGER NOT NULL,
    currency            TEXT    NOT NULL,
    outcome             TEXT    NOT NULL CHECK (outcome IN ('duplicate', 'conflict', 'held')),
    fingerprint         TEXT    NOT NULL,
    original_posting_id INTEGER REFERENCES postings (posting_id),
    original_file_id    TEXT,
    original_record_no  INTEGER,
    original_run_id     INTEGER,
    original_posted_at  TEXT,
    differences         TEXT,
    reason              TEXT,
    seen_at             TEXT    NOT NULL,
    PRIMARY KEY (run_id, record_no)
);
CREATE INDEX journal_key ON journal (tenant, operation, posting_key);

CREATE TABLE findings (
    run_id          INTEGER NOT NULL REFERENCES runs (run_id),
    seq             INTEGER NOT NULL,
    severity        TEXT    NOT NULL,
    code            TEXT    NOT NULL,
    record_index    INTEGER NOT NULL,
    line            INTEGER NOT NULL,
    byte_offset     INTEGER NOT NULL,
    field           TEXT,
    columns         TEXT,
    expected        TEXT    NOT NULL,
    found           TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
);
