-- Bank statements (issue #13): the bank's side, in tables of their own — never postings.
-- A statement is identified by its account, kind, own id, sequence and period, never the
-- file it came in (`model::statement_key`); an entry by the bank's reference, else by its
-- fingerprint and its occurrence among equal fingerprints of its statement
-- (`model::entry_key`). Both behind unique indexes, written in the run's one transaction.
CREATE TABLE statements (
    statement_id    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant          TEXT    NOT NULL,
    statement_key   TEXT    NOT NULL,
    format          TEXT    NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('final', 'intraday', 'notification')),
    account         TEXT    NOT NULL,
    currency        TEXT,
    servicer        TEXT,
    stmt_id         TEXT    NOT NULL,
    sequence        TEXT,
    stmt_date       TEXT,
    from_date       TEXT,
    to_date         TEXT,
    copy            BIGINT  NOT NULL DEFAULT 0,
    opening_minor   BIGINT,
    closing_minor   BIGINT,
    balance_currency TEXT,
    entries         BIGINT  NOT NULL,
    fingerprint     TEXT    NOT NULL,
    detail          TEXT    NOT NULL,
    run_id          BIGINT  NOT NULL REFERENCES runs (run_id),
    recorded_at     TEXT    NOT NULL
);
CREATE UNIQUE INDEX statements_key ON statements (tenant, statement_key);
CREATE INDEX statements_account ON statements (tenant, account, stmt_date);

CREATE TABLE statement_entries (
    entry_id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant          TEXT    NOT NULL,
    account         TEXT    NOT NULL,
    entry_key       TEXT    NOT NULL,
    statement_id    BIGINT  NOT NULL REFERENCES statements (statement_id),
    run_id          BIGINT  NOT NULL REFERENCES runs (run_id),
    entry_no        BIGINT  NOT NULL,
    amount_minor    BIGINT  NOT NULL CHECK (amount_minor >= 0),
    currency        TEXT    NOT NULL,
    credit          BIGINT  NOT NULL,
    reversal        BIGINT  NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('booked', 'provisional', 'info')),
    booking_date    TEXT,
    value_date      TEXT,
    bank_ref        TEXT,
    customer_ref    TEXT,
    end_to_end_id   TEXT,
    bank_tx_code    TEXT,
    fingerprint     TEXT    NOT NULL,
    detail          TEXT    NOT NULL,
    recorded_at     TEXT    NOT NULL
);
CREATE UNIQUE INDEX statement_entries_key ON statement_entries (tenant, account, entry_key);
CREATE INDEX statement_entries_run ON statement_entries (run_id, entry_no);
CREATE INDEX statement_entries_bank_ref ON statement_entries (tenant, bank_ref);

-- Every entry of a run that was not recorded as new, with the entry it matched.
CREATE TABLE statement_journal (
    run_id            BIGINT  NOT NULL REFERENCES runs (run_id),
    entry_no          BIGINT  NOT NULL,
    tenant            TEXT    NOT NULL,
    outcome           TEXT    NOT NULL CHECK (outcome IN ('duplicate', 'conflict', 'held', 'confirmed')),
    original_entry_id BIGINT  REFERENCES statement_entries (entry_id),
    account           TEXT    NOT NULL,
    entry_key         TEXT    NOT NULL,
    amount_minor      BIGINT  NOT NULL,
    currency          TEXT    NOT NULL,
    credit            BIGINT  NOT NULL,
    differences       TEXT,
    reason            TEXT,
    PRIMARY KEY (run_id, entry_no)
);
