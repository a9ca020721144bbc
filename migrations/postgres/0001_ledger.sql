-- The ledger on PostgreSQL: the same tables, columns and unique indexes as
-- migrations/sqlite, so that both backends give identical reports.
-- Key columns use COLLATE "C": byte-order comparison is faster in the B-tree and is all a
-- key needs. Times are RFC 3339 UTC text, as on SQLite, so reports are byte-identical.
-- Identity columns carry no meaning: a conflicting insert still consumes a value.
-- Avoided on purpose (for PostgreSQL-wire distributed databases): triggers, advisory
-- locks in the ingest path, SERIALIZABLE, partial or expression indexes, LISTEN/NOTIFY.

CREATE TABLE runs (
    run_id          BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant          TEXT    COLLATE "C" NOT NULL,
    file_id         TEXT    COLLATE "C",
    sha256          TEXT    NOT NULL,
    format          TEXT    NOT NULL,
    source_name     TEXT    NOT NULL,
    started_at      TEXT    NOT NULL,
    finished_at     TEXT,
    status          TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'rejected')),
    records         BIGINT  NOT NULL DEFAULT 0,
    posted          BIGINT  NOT NULL DEFAULT 0,
    duplicates      BIGINT  NOT NULL DEFAULT 0,
    conflicts       BIGINT  NOT NULL DEFAULT 0,
    held            BIGINT  NOT NULL DEFAULT 0,
    posted_amount_minor BIGINT NOT NULL DEFAULT 0,
    errors          BIGINT  NOT NULL DEFAULT 0,
    warnings        BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX runs_tenant_file ON runs (tenant, file_id);

CREATE TABLE files (
    tenant          TEXT    COLLATE "C" NOT NULL,
    file_id         TEXT    COLLATE "C" NOT NULL,
    format          TEXT    NOT NULL,
    sha256          TEXT,
    first_run_id    BIGINT  NOT NULL REFERENCES runs (run_id),
    first_seen_at   TEXT    NOT NULL,
    PRIMARY KEY (tenant, file_id)
);

CREATE TABLE postings (
    posting_id      BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant          TEXT    COLLATE "C" NOT NULL,
    operation       TEXT    COLLATE "C" NOT NULL,
    posting_key     TEXT    COLLATE "C" NOT NULL,
    file_id         TEXT    COLLATE "C" NOT NULL,
    record_no       BIGINT  NOT NULL CHECK (record_no > 0),
    trace_number    TEXT    COLLATE "C",
    debit_account   TEXT    NOT NULL,
    credit_account  TEXT    NOT NULL,
    amount_minor    BIGINT  NOT NULL CHECK (amount_minor >= 0),
    currency        TEXT    NOT NULL CHECK (length(currency) = 3),
    effective_date  TEXT,
    fingerprint     TEXT    NOT NULL,
    detail          TEXT    NOT NULL,
    run_id          BIGINT  NOT NULL REFERENCES runs (run_id),
    posted_at       TEXT    NOT NULL
);
CREATE UNIQUE INDEX postings_natural_key ON postings (tenant, operation, posting_key);
CREATE UNIQUE INDEX postings_source ON postings (tenant, file_id, record_no);
CREATE INDEX postings_trace ON postings (tenant, trace_number);
CREATE INDEX postings_run ON postings (run_id);

CREATE TABLE journal (
    run_id              BIGINT  NOT NULL REFERENCES runs (run_id),
    record_no           BIGINT  NOT NULL,
    tenant              TEXT    COLLATE "C" NOT NULL,
    file_id             TEXT    COLLATE "C" NOT NULL,
    operation           TEXT    COLLATE "C" NOT NULL,
    posting_key         TEXT    COLLATE "C" NOT NULL,
    trace_number        TEXT,
    debit_account       TEXT    NOT NULL,
    credit_account      TEXT    NOT NULL,
    amount_minor        BIGINT  NOT NULL,
    currency            TEXT    NOT NULL,
    outcome             TEXT    NOT NULL CHECK (outcome IN ('duplicate', 'conflict', 'held')),
    fingerprint         TEXT    NOT NULL,
    original_posting_id BIGINT  REFERENCES postings (posting_id),
    original_file_id    TEXT,
    original_record_no  BIGINT,
    original_run_id     BIGINT,
    original_posted_at  TEXT,
    differences         TEXT,
    reason              TEXT,
    seen_at             TEXT    NOT NULL,
    PRIMARY KEY (run_id, record_no)
);
CREATE INDEX journal_key ON journal (tenant, operation, posting_key);

CREATE TABLE findings (
    run_id          BIGINT  NOT NULL REFERENCES runs (run_id),
    seq             BIGINT  NOT NULL,
    severity        TEXT    NOT NULL,
    code            TEXT    NOT NULL,
    record_index    BIGINT  NOT NULL,
    line            BIGINT  NOT NULL,
    byte_offset     BIGINT  NOT NULL,
    field           TEXT,
    columns         TEXT,
    expected        TEXT    NOT NULL,
    found           TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
);
