-- Operator actions (issue #12): decisions on held records, compensations, and the
-- totals of a run per currency.
--
-- What a run was: an ingest of a file, an operator's decision on a held record
-- (`clearledger resolve`), or a compensation of earlier postings (`clearledger reverse`).
-- Every action is a run, so `runs` lists what anybody did, in order.
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'ingest'
    CHECK (kind IN ('ingest', 'resolve', 'reverse'));

-- A held record keeps what posting it later needs: its effective date and its fields
-- (the `detail` a posting carries). Held records are rare; other rows leave both NULL.
ALTER TABLE journal ADD COLUMN effective_date TEXT;
ALTER TABLE journal ADD COLUMN detail TEXT;

-- A compensation names the posting it reverses; NULL for every other posting.
ALTER TABLE postings ADD COLUMN compensates INTEGER;
CREATE UNIQUE INDEX postings_compensates ON postings (compensates) WHERE compensates IS NOT NULL;

-- One decision per held key: posted or rejected, by whom, when and why, recorded in the
-- same transaction as its effect. The primary key makes a second, concurrent decision on
-- the same record lose, whatever it decided.
CREATE TABLE decisions (
    tenant          TEXT    NOT NULL,
    operation       TEXT    NOT NULL,
    posting_key     TEXT    NOT NULL,
    held_run_id     INTEGER NOT NULL REFERENCES runs (run_id),
    held_record_no  INTEGER NOT NULL,
    decision        TEXT    NOT NULL CHECK (decision IN ('post', 'reject')),
    reason          TEXT    NOT NULL,
    decided_by      TEXT    NOT NULL,
    decided_at      TEXT    NOT NULL,
    run_id          INTEGER NOT NULL REFERENCES runs (run_id),
    posting_id      INTEGER REFERENCES postings (posting_id),
    PRIMARY KEY (tenant, operation, posting_key)
);
CREATE INDEX decisions_held ON decisions (held_run_id, held_record_no);

-- What a run posted, per currency: one total across currencies means nothing.
CREATE TABLE run_totals (
    run_id          INTEGER NOT NULL REFERENCES runs (run_id),
    currency        TEXT    NOT NULL,
    posted          INTEGER NOT NULL,
    amount_minor    INTEGER NOT NULL,
    PRIMARY KEY (run_id, currency)
) WITHOUT ROWID;
-- Only the totals that fit: a run of a release before issue #17 could post amounts whose
-- sum passes 64 bits (total() adds in floating point, so it cannot overflow).
INSERT INTO run_totals (run_id, currency, posted, amount_minor)
    SELECT run_id, currency, count(*), sum(amount_minor) FROM postings
    WHERE (run_id, currency) IN (SELECT run_id, currency FROM postings GROUP BY run_id, currency
                                 HAVING total(amount_minor) < 9.2e18)
    GROUP BY run_id, currency;

-- Why an operator's run was made, and by whom (NULL for an ingest).
ALTER TABLE runs ADD COLUMN reason TEXT;
ALTER TABLE runs ADD COLUMN actor TEXT;

-- The held records (`clearledger held`): few, among many journal rows.
CREATE INDEX journal_held ON journal (tenant, run_id, record_no) WHERE outcome = 'held';
